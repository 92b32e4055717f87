"""tinygpt: the small GPT-style decoder the pyhccl examples train and serve.

model    forward pass, hand-written backward pass, parameter names
data     character-level text of the interpreter's standard library
optim    Adam
trainer  settings, the single-process reference run, checkpoints
infer    key/value-cache generation, whole or tensor-parallel shards
dist     pyhccl helpers shared by the example programs
timing   host waits against communication in flight (train.py's exposed time)
"""
