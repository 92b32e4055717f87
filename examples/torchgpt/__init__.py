"""torchgpt: the small GPT the torch examples (torch_ddp.py, torch_fsdp.py, torch_tp.py) train and serve.

model     the GPT in torch (causal attention, GELU MLP, tied output layer)
training  batches of examples/tinygpt's stdlib text, evaluation, the DDP
          communication timer, cross-rank and single-process checks
launch    init_process_group under torchrun, mpirun/mpiexec or srun
"""
