"""pyhccl.torch: pyhccl for torch users (optional; needs torch).

- ``import pyhccl.torch`` registers the torch.distributed backend "pyhccl":
  ``dist.init_process_group("pyhccl")`` under torchrun, mpirun or srun, and
  DDP, FSDP2, DeviceMesh and the ``dist.*`` functions run on pyhccl
  (docs/torch.md). init_process_group_from_env() derives RANK/WORLD_SIZE from
  the launcher's variables.
- all_reduce_tensors() and GradReducer: bucketed gradient all-reduce on a
  pyhccl Comm directly, without torch.distributed.

Importing this module without torch raises ImportError.
"""

from ._backend import BACKEND_NAME, ProcessGroupPyhccl
from ._grad import DEFAULT_BUCKET_BYTES, GradReducer, Work, all_reduce_tensors
from ._launch import init_process_group_from_env, launch_env
from ._setup import register
from ._work import PyhcclWork

register()

__all__ = ["BACKEND_NAME", "DEFAULT_BUCKET_BYTES", "GradReducer", "ProcessGroupPyhccl",
           "PyhcclWork", "Work", "all_reduce_tensors", "init_process_group_from_env",
           "launch_env", "register"]
