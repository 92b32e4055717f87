"""Every public object of pyhccl has a docstring."""

import inspect

import pyhccl
import pyhccl.mpi
from conftest import ROOT


def public_members(cls):
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        yield name, member


def missing_docs():
    missing = []
    for module in (pyhccl, pyhccl.mpi):
        if not module.__doc__:
            missing.append(module.__name__)
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, (int, str, bool)) or obj is pyhccl.bfloat16:
                continue                   # constants (IntEnum members included)
            if not (obj.__doc__ or "").strip():
                missing.append(f"{module.__name__}.{name}")
            if inspect.isclass(obj):
                for attr, member in public_members(obj):
                    if isinstance(member, (int, str)):
                        continue
                    doc = getattr(member, "__doc__", None)
                    if not (doc or "").strip():
                        missing.append(f"{module.__name__}.{name}.{attr}")
    return missing


def test_every_public_object_has_a_docstring():
    assert missing_docs() == []


def test_docstrings_start_with_a_summary_line():
    bad = []
    for name in pyhccl.__all__:
        obj = getattr(pyhccl, name)
        if callable(obj) and not isinstance(obj, int) and obj.__doc__:
            first = obj.__doc__.strip().splitlines()[0]
            if inspect.isclass(obj):
                continue
            # embedsignature puts the signature first in extension functions
            if first.startswith(name + "("):
                lines = [ln for ln in obj.__doc__.strip().splitlines()[1:] if ln.strip()]
                first = lines[0].strip() if lines else ""
            if not first.endswith("."):
                bad.append(name)
    assert bad == []


def test_collective_docstrings_state_the_rules():
    for name in ("all_reduce", "broadcast", "all_gather", "reduce_scatter", "reduce", "scatter",
                 "all_to_all", "barrier", "all_gather_v", "reduce_scatter_v", "all_to_all_v",
                 "all_to_all_vc"):
        doc = getattr(pyhccl.Comm, name).__doc__
        assert "Collective" in doc and "synchronise" in doc and "Hccl" in doc, name


def test_shared_docstring_text_is_filled_in():
    """The slots of src/docs.pxi become the shared text at import, under Comm's name."""
    import re
    for name in ("all_reduce", "broadcast", "all_gather", "reduce_scatter", "reduce", "scatter",
                 "all_to_all", "send", "recv", "all_gather_v", "reduce_scatter_v",
                 "all_to_all_v", "all_to_all_vc", "batch_send_recv"):
        doc = getattr(pyhccl.Comm, name).__doc__
        assert doc.startswith(f"Comm.{name}("), name
        assert re.search(r"HcclError: Hccl\w+ refused the call", doc), name
        assert not re.search(r"^ *\{\w+", doc, re.M), name     # no slot left


def test_every_public_name_is_in_the_api_reference():
    """docs/api.rst documents everything pyhccl exports."""
    text = (ROOT / "docs" / "api.rst").read_text()
    words = set(text.replace(",", " ").split())
    missing = [name for name in pyhccl.__all__ if name not in words]
    assert missing == []
