// The trace recorder behind aclprof* (prof_api.cc) and PYHCCL_TRACE: events
// (hostrt::TraceEvent, hostrt.h) are kept in memory and written as one Chrome
// trace JSON per process, <dir>/pyhccl-trace-<host>-<pid>.json, which
// Perfetto and chrome://tracing open. Two independent sessions may feed it:
// PYHCCL_TRACE=dir (every device, from library load to exit) and the aclprof
// session (the devices of the started configs, written to aclprofInit's dir).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hostrt {

// Starts (+1) or stops (-1) recording the listed devices for the aclprof session.
void trace_devices(const std::vector<uint32_t> &devices, int delta);
// Sets (non-empty) or clears the aclprof session's directory. Clearing drops
// the events unless PYHCCL_TRACE still wants them.
void trace_prof_dir(const std::string &dir);
// Writes what was recorded to <dir>/pyhccl-trace-<host>-<pid>.json (whole
// file replaced). False with *err set on an I/O failure.
bool trace_write(const std::string &dir, std::string *err);
// Writes the files of every open session (aclFinalize, process exit).
void trace_flush();
// Creates dir (and its parents) if missing; false with *err if it is not a
// writable directory afterwards.
bool trace_make_dir(const std::string &dir, std::string *err);

}  // namespace hostrt
