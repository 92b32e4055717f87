"""Every diagnostic of the C libraries goes through the logger (csrc/common/log.h:
PYHCCL_LOG, or PYHCCL_NOTICE for what the default level must show), so the level,
ASCEND_SLOG_PRINT_TO_STDOUT and ASCEND_PROCESS_LOG_PATH apply to all of it."""

import re
from conftest import ROOT



def test_no_bare_fprintf_to_stderr():
    bare = re.compile(r"\bfprintf\s*\(\s*stderr\b|\bstd::cerr\b|\bperror\s*\(")
    found = []
    for path in sorted((ROOT / "csrc").rglob("*")):
        if path.suffix not in (".cc", ".h", ".c") or path.name == "log.h":
            continue
        if path.parent.name == "cann_tool":  # a command-line tool: its stderr is its interface
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if bare.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "diagnostics bypassing csrc/common/log.h:\n" + "\n".join(found)
