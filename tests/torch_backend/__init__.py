"""The torch backend suite (a package, so its conftest is torch_backend.conftest and
never takes the name of the MPI suite's conftest)."""
