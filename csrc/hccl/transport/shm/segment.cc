// POSIX shared-memory segments (segment.h), and the at-exit removal of
// names not unlinked yet.
#include "hccl/transport/shm/segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

namespace hccl {
namespace {

// Leaked on purpose: the atexit handler may run after static destructors.
std::mutex *g_mu = new std::mutex;
std::set<std::string> *g_pending = new std::set<std::string>;

void unlink_pending_at_exit() {
  std::lock_guard<std::mutex> lock(*g_mu);
  for (const std::string &name : *g_pending) shm_unlink(name.c_str());
  g_pending->clear();
}

void remember(const std::string &name) {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit(unlink_pending_at_exit); });
  std::lock_guard<std::mutex> lock(*g_mu);
  g_pending->insert(name);
}

bool map_fd(int fd, size_t bytes, ShmMapping *out, std::string *why, const std::string &name) {
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    *why = "mmap of shared-memory segment " + name + " failed: " + std::strerror(errno);
    return false;
  }
  out->fd = fd;
  out->base = p;
  out->bytes = bytes;
  return true;
}

}  // namespace

bool shm_segment_create(const std::string &name, size_t bytes, ShmMapping *out, std::string *why) {
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    *why = "shm_open(" + name + ") failed: " + std::strerror(errno);
    return false;
  }
  remember(name);
  // Reserve the tmpfs pages now: a full /dev/shm becomes an error here rather
  // than a SIGBUS in the middle of a collective.
  int rc = ftruncate(fd, static_cast<off_t>(bytes));
  if (rc == 0) rc = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  else rc = errno;
  if (rc != 0) {
    *why = "cannot size shared-memory segment " + name + " to " + std::to_string(bytes) +
           " bytes: " + std::strerror(rc) + " (is /dev/shm full?)";
    close(fd);
    shm_segment_unlink(name);
    return false;
  }
  if (!map_fd(fd, bytes, out, why, name)) {
    close(fd);
    shm_segment_unlink(name);
    return false;
  }
  return true;
}

bool shm_segment_open(const std::string &name, size_t bytes, ShmMapping *out, std::string *why) {
  int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    *why = "shm_open(" + name + ") of a peer's segment failed: " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < bytes) {
    *why = "peer's shared-memory segment " + name + " is smaller than announced";
    close(fd);
    return false;
  }
  if (!map_fd(fd, bytes, out, why, name)) {
    close(fd);
    return false;
  }
  return true;
}

void shm_segment_close(ShmMapping *m) {
  if (m->base != nullptr) munmap(m->base, m->bytes);
  if (m->fd >= 0) close(m->fd);
  m->base = nullptr;
  m->fd = -1;
  m->bytes = 0;
}

void shm_segment_unlink(const std::string &name) {
  shm_unlink(name.c_str());
  std::lock_guard<std::mutex> lock(*g_mu);
  g_pending->erase(name);
}

}  // namespace hccl
