"""Slurm over the host transport: the client commands, submitting and cancelling a profile's
job, and following the job's state (see docs/cluster.md)."""
