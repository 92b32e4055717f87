"""launch_env(): torch's RANK/WORLD_SIZE/LOCAL_RANK/MASTER_* from each launcher's variables."""

import os

import pytest
import torch.distributed as dist

from pyhccl.torch import launch_env
from pyhccl.torch._launch import first_slurm_host


def test_the_running_job(rank, size):
    env = launch_env(use_mpi=False) if "RANK" in os.environ else None
    if env is not None:
        assert env["RANK"] == str(rank) and env["WORLD_SIZE"] == str(size)
    assert os.environ["RANK"] == str(dist.get_rank())     # set by init_process_group_from_env
    assert dist.get_backend() == "pyhccl"


def test_torchrun_variables_are_kept():
    env = launch_env({"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "1",
                      "LOCAL_WORLD_SIZE": "4", "MASTER_ADDR": "h0", "MASTER_PORT": "29500"})
    assert env == {"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4",
                   "MASTER_ADDR": "h0", "MASTER_PORT": "29500"}


@pytest.mark.parametrize("variables,expect", [
    ({"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "8",
      "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "4"}, ("5", "8", "1", "4")),
    ({"PMI_RANK": "2", "PMI_SIZE": "4", "MPI_LOCALRANKID": "2", "MPI_LOCALNRANKS": "4"},
     ("2", "4", "2", "4")),
    ({"SLURM_PROCID": "7", "SLURM_NTASKS": "16", "SLURM_LOCALID": "3",
      "SLURM_NTASKS_PER_NODE": "8(x2)"}, ("7", "16", "3", "8")),
], ids=["openmpi", "mpich", "slurm"])
def test_mpi_and_slurm_variables(variables, expect):
    env = launch_env(dict(variables, MASTER_ADDR="h0", MASTER_PORT="1234"), use_mpi=False)
    assert (env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"], env["LOCAL_WORLD_SIZE"]) == expect
    assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("h0", "1234")


def test_slurm_master_from_the_node_list():
    env = launch_env({"SLURM_PROCID": "0", "SLURM_NTASKS": "4", "SLURM_LOCALID": "0",
                      "SLURM_NTASKS_PER_NODE": "2", "SLURM_JOB_NODELIST": "gpu[07-08,11]",
                      "SLURM_JOB_ID": "123456"}, use_mpi=False)
    assert env["MASTER_ADDR"] == "gpu07"
    assert env["MASTER_PORT"] == str(20000 + 123456 % 20000)
    assert first_slurm_host("node1,node2") == "node1"
    assert first_slurm_host("a[3]") == "a3"


def test_one_host_without_a_master_uses_a_file_store():
    env = launch_env({"PMI_RANK": "1", "PMI_SIZE": "2", "MPI_LOCALRANKID": "1",
                      "MPI_LOCALNRANKS": "2"}, use_mpi=False)
    assert env["PYHCCL_INIT_METHOD"].startswith("file://")
    assert "MASTER_ADDR" not in env


def test_missing_launcher_and_hosts_without_a_master_are_refused():
    with pytest.raises(RuntimeError, match="no launcher variables"):
        launch_env({}, use_mpi=False)
    with pytest.raises(RuntimeError, match="MASTER_ADDR"):
        launch_env({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "4",
                    "OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_LOCAL_SIZE": "2"},
                   use_mpi=False)


def test_the_name_hccl_is_left_to_torch_npu():
    assert "pyhccl" in dist.Backend.backend_list
    assert getattr(dist.Backend, "PYHCCL") == "pyhccl"
    assert "HCCL" not in getattr(dist.Backend, "_plugins", {})


def test_an_mpi_world_that_is_not_the_launchers_is_not_used():
    # mpi4py built for another MPI starts as a singleton: its world cannot agree on a
    # master for these ranks, so launch_env falls back (here: a file store on one host).
    pytest.importorskip("mpi4py")
    env = launch_env({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "5",
                      "OMPI_COMM_WORLD_LOCAL_RANK": "3", "OMPI_COMM_WORLD_LOCAL_SIZE": "5"})
    assert env["PYHCCL_INIT_METHOD"].startswith("file://")
