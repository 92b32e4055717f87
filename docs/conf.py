"""Sphinx configuration: the pyhccl user guide (tutorial) and API reference.

Build: python -m sphinx -W -b html docs docs/_build/html (make test builds it once,
warnings as errors). The reference is generated from the docstrings of the
built package, so build pyhccl first (make build).
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import pyhccl  # noqa: E402

project = "pyhccl"
author = "the pyhccl developers"
release = pyhccl.__version__
version = release

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon"]
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True          # "Attributes:" as fields, not duplicate entries
autodoc_member_order = "bysource"
autodoc_typehints = "none"           # signatures come from the extension's docstrings
autodoc_default_options = {"members": True}

# pyhccl.torch imports torch, which pyhccl does not depend on: mock it if absent.
try:
    import torch  # noqa: F401
    autodoc_mock_imports = []
except ImportError:
    autodoc_mock_imports = ["torch"]

source_suffix = {".rst": "restructuredtext"}
master_doc = "index"
exclude_patterns = ["_build", "tutorial/*.py", "*.md"]
html_theme = "alabaster"
html_static_path = []
nitpicky = False


def _drop_self(app, what, name, obj, options, signature, return_annotation):
    """Cython's embedded signatures start with `self`; Python's do not show it."""
    if signature and signature.startswith("(self"):
        signature = "(" + signature[len("(self"):].lstrip(", ")
    return signature, return_annotation


def setup(app):
    app.connect("autodoc-process-signature", _drop_self)
