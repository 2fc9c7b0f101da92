"""A simulated GPU host: an SGLang (or vLLM) server that starts, logs, serves and fails like
the real one, without a GPU. Run it with ``bringup sim`` or ``python -m tui.sim``; see
``docs/simulator.md``.

Layout: ``cli``/``config`` (flags), ``layout`` (ranks and tags), ``model`` (sizes and memory),
``sglang_startup``/``vllm_startup`` (pure start-up schedules in ``timeline`` steps),
``failures``/``vllm_failures`` (failure texts), ``runner`` (the main process: plays the
schedule, owns ``process`` children and signals), ``server`` with ``sglang_api`` and
``openai_api`` (the ASGI app on uvicorn), ``tokens`` (paced generation), ``stats`` and
``metrics`` (what was generated), ``gpustate`` and ``nvidia_smi`` (simulated GPU telemetry).
"""
