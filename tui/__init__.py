"""bringup: watch, launch and benchmark LLM servers on remote multi-GPU hosts."""

__version__ = "0.1.0"
