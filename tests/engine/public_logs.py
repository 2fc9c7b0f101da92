"""Small excerpts of real start-up logs from public GitHub threads, one constant per case, each
with the thread it came from. The lines are as posted; where a thread quoted them as a
Markdown block quote the leading ``> `` is dropped, and only the lines the rule needs (with the
lines that say which engine and stage they belong to) are kept."""

from __future__ import annotations

# ---------------------------------------------------------------------------- (a) DeepGEMM JIT

# https://github.com/sgl-project/sglang/issues/16026 (SGLang, TP/EP ranks, warm-up per kernel)
DEEPGEMM_WARMUP = (
    "[2025-12-29 07:57:46 TP0 EP0] Try DeepGEMM JIT Compiling for <GEMM_NT_F8F8BF16> N=16384, "
    "K=512, num_groups=1 with all Ms. It only takes a little time (typically 1 sec) if you have "
    "run `python3 -m sglang.compile_deep_gemm`. \n"
    "[2025-12-29 07:57:46 TP0 EP0] Required memory for warmup: 2.0390625GB, Available memory: "
    "44.05438232421875GB\n"
    "DeepGEMM warmup: 100%|██████████████████████████████████████████████████████████████████"
    "████████████████████████████| 65536/65536 [00:05<00:00, 11112.46it/s]\n"
    "[2025-12-29 07:57:52 TP0 EP0] Entering DeepGEMM JIT Pre-Compile session. It may take a "
    "long time (typically 10-20 mins) if you have not run `sglang.compile_deep_gemm`. It is "
    "recommended to run `sglang.compile_deep_gemm` with same args as `sglang.launch_server` for "
    "pre-compilation to reduce the overhead if you have not run it before. For example: "
    "`python3 -m sglang.compile_deep_gemm --model deepseek-ai/DeepSeek-V3 --tp 8 "
    "--trust-remote-code`\n"
    "[2025-12-29 07:57:52 TP0 EP0] Try DeepGEMM JIT Compiling for <GEMM_NT_F8F8BF16> N=7168, "
    "K=8192, num_groups=1 with all Ms. It only takes a little time (typically 1 sec) if you "
    "have run `python3 -m sglang.compile_deep_gemm`. \n"
)

# https://github.com/sgl-project/sglang/pull/5580 (the first release of the pre-compile
# session: its message said "Pre-Complie", and the bar had no description)
DEEPGEMM_FIRST_RELEASE = (
    "[2025-04-21 18:35:51 TP0] Entering DeepGEMM JIT Pre-Complie session. And it may takes a "
    "long time(Typically 10-20 mins) if you have not run `sglang.compile_deep_gemm`. Recommand "
    "to run `sglang.compile_deep_gemm` with same args as `sglang.launch_server` for "
    "pre-compilation to reduce the overhead if you have not run it before. For example: "
    "`python3 -m sglang.compile_deep_gemm --model deepseek-ai/DeepSeek-V3 --tp 8 "
    "--trust-remote-code`\n"
    "[2025-04-21 18:35:51 TP0] Try DeepGEMM JIT Compiling for <gemm_fp8_fp8_bf16_nt> N=6144, "
    "K=2560, num_groups=1 with all Ms. It only takes a litte time(Typically 1 sec) if you have "
    "run `sglang.compile_deep_gemm`. \n"
    "100%|███████████████████████████████████████████████████████████████████████████████████"
    "██████████████████████████████████| 22/22 [00:00<00:00, 23.30it/s]\n"
)

# ---------------------------------------------------------------------------- (b) FlashInfer

# https://github.com/maaaxinfinity/ktrun/issues/13 (FlashInfer's JIT, 26 s for one module)
FLASHINFER_JIT = (
    "2025-03-28 22:24:07,926 - INFO - flashinfer.jit: Loading JIT ops: batch_mla_attention_dtype_"
    "q_bf16_dtype_kv_bf16_dtype_o_bf16_dtype_idx_i32_head_dim_ckv_512_head_dim_kpe_64_profiler_"
    "False\n"
    "2025-03-28 22:24:33,507 - INFO - flashinfer.jit: Finished loading JIT ops: batch_mla_"
    "attention_dtype_q_bf16_dtype_kv_bf16_dtype_o_bf16_dtype_idx_i32_head_dim_ckv_512_head_dim_"
    "kpe_64_profiler_False\n"
)

# https://github.com/sgl-project/sglang/pull/29595 (SGLang names the autotune cache, then
# FlashInfer's autotuner draws a bar per op, counting profiles)
FLASHINFER_AUTOTUNE_SGLANG = (
    "[2026-06-29 01:38:08 TP0] Running FlashInfer autotune with cache: /root/.cache/sglang/"
    "flashinfer/autotune/0.6.12/sm103/15fc7a2edb371f48/rank_tp0_pp0_dp0.json\n"
    "[AutoTuner]: Tuning flashinfer::trtllm_fp4_block_scale_moe: 100%|███████████████████████"
    "████████████████████████████████████████████| 10/10 [01:29<00:00,  8.92s/profile]\n"
)

# https://github.com/vllm-project/vllm/pull/54794 (vLLM: 43 s per profile; vLLM's own
# "No available shared memory broadcast block" warning while the autotuner works)
FLASHINFER_AUTOTUNE_VLLM = (
    "[AutoTuner]: Tuning flashinfer::trtllm_fp4_block_scale_moe:  55%|███████████████▎       "
    "     | 12/22 [06:58<07:10, 43.03s/profile]\n"
)

# ---------------------------------------------------------------------------- (c) torch.compile

# https://github.com/vllm-project/vllm/pull/11005 (vLLM's first timing lines, no envelope)
VLLM_COMPILE_FIRST = (
    "Dynamo bytecode transform time: 4.60 s\n"
    "Compiling a graph for general shape takes 14.77 s\n"
    "torch.compile takes 19.37 s in total\n"
    "Graph capturing finished in 15 secs, took 0.33 GiB\n"
)

# https://github.com/vllm-project/vllm/issues/20783 (vLLM V1 workers name the cache)
VLLM_COMPILE_CACHE = (
    "(VllmWorker rank=5 pid=843) INFO 07-10 12:50:22 [backends.py:508] Using cache directory: "
    "/root/.cache/vllm/torch_compile_cache/d05ec3196f/rank_5_0/backbone for vLLM's "
    "torch.compile\n"
)

# https://github.com/sgl-project/sglang/pull/20758 (SGLang: the decode graphs, then the
# piecewise graphs, whose capture torch.compiles one graph per token count first)
SGLANG_PIECEWISE = (
    "[2026-03-17 07:16:11 TP0] Capture cuda graph begin. This can take up to several minutes. "
    "avail mem=11.64 GB\n"
    "[2026-03-17 07:16:11 TP0] Capture cuda graph bs [1, 2, 4, 8]\n"
    "Capturing batches (bs=1 avail_mem=10.83 GB): 100%|███████████████████████████████████████"
    "██████████████████████████████████████████████████████| 4/4 [00:24<00:00,  6.04s/it]\n"
    "[2026-03-17 07:16:35 TP0] Registering 228 cuda graph addresses\n"
    "[2026-03-17 07:16:38 TP0] Capture cuda graph end. Time elapsed: 27.41 s. mem usage=0.83 "
    "GB. avail mem=10.81 GB.\n"
    "[2026-03-17 07:16:38 TP0] Capture piecewise CUDA graph begin. avail mem=10.81 GB\n"
    "[2026-03-17 07:16:38 TP0] Capture cuda graph num tokens [4, 8, 12, 16, 20]\n"
    "[2026-03-17 07:16:38 TP0] install_torch_compiled\n"
    "Compiling num tokens (num_tokens=20):   0%|                                              "
    "                                                              | 0/5 [00:00<?, ?it/s]"
    "[2026-03-17 07:16:46 TP0] Initializing SGLangBackend\n"
    "[2026-03-17 07:16:46 TP0] SGLangBackend __call__\n"
    "[2026-03-17 07:16:51 TP0] Compiling a graph for dynamic shape takes 3.38 s\n"
)

# ---------------------------------------------------------------------------- (d) graph sizes

# https://github.com/sgl-project/sglang/pull/11716 (52 batch sizes, counting down)
SGLANG_CAPTURE_BARS = (
    "Capturing batches (bs=216 avail_mem=10.30 GB):  40%|████      | 21/52 [00:03<00:04,  "
    "7.40it/s]\n"
    "Capturing batches (bs=208 avail_mem=10.29 GB):  44%|████▍     | 23/52 [00:04<00:03,  "
    "7.31it/s]\n"
)

# https://github.com/vllm-project/vllm/pull/46389 (vLLM V1: the piecewise sizes, then the full
# decode graphs, each a bar of its own)
VLLM_CAPTURE_BARS = (
    "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 51/51 "
    "[00:03<00:00, 15.18it/s]\n"
    "(Worker_TP0 pid=2500801) \n"
    "Capturing CUDA graphs (decode, FULL):   6%|▌         | 2/35 [00:00<00:02, 14.82it/s]\n"
)

# ---------------------------------------------------------------------------- (e) timeouts

# https://github.com/vllm-project/vllm-ascend/issues/3800 (vLLM 0.11: the message lacks a
# space, "sendinitial")
VLLM_ENGINE_TIMEOUT = (
    '(ApiServer_0 pid=26419)   File "/vllm-workspace/vllm/vllm/v1/engine/core_client.py", line '
    "496, in __init__\n"
    '(ApiServer_0 pid=26419)     raise TimeoutError("Timed out waiting for engines to send"\n'
    "(ApiServer_0 pid=26419) TimeoutError: Timed out waiting for engines to sendinitial message "
    "on input socket.\n"
)

# https://github.com/vllm-project/vllm/pull/35616 (the message since that change)
VLLM_ENGINE_TIMEOUT_NAMED = (
    "TimeoutError: Timed out waiting for engine core processes to start. This is often caused "
    "by slow weight loading for large models. Waited 600s (configured by "
    "VLLM_ENGINE_READY_TIMEOUT_S). To increase the timeout, set the environment variable: "
    "VLLM_ENGINE_READY_TIMEOUT_S=<seconds>\n"
)

# https://github.com/sgl-project/sglang/pull/6555 (SGLang's warm-up request timed out after
# 600 s; the traceback is logged on the lines after "warmup error:")
SGLANG_WARMUP_TIMEOUT = (
    "Initialization failed. warmup error: Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/urllib3/connectionpool.py", line 534, in '
    "_make_request\n"
    "    response = conn.getresponse()\n"
    "urllib3.exceptions.ReadTimeoutError: HTTPConnectionPool(host='0.0.0.0', port=8000): Read "
    "timed out. (read timeout=600)\n"
    "\n"
    "During handling of the above exception, another exception occurred:\n"
    "\n"
    "Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/entrypoints/http_server.py", line 1324, in '
    "_execute_server_warmup\n"
    "    res = requests.post(\n"
    "requests.exceptions.ReadTimeout: HTTPConnectionPool(host='0.0.0.0', port=8000): Read timed "
    "out. (read timeout=600)\n"
)

# https://github.com/sgl-project/sglang/issues/4208 (the router's health checks while the
# workers still compile, SGLang's --enable-torch-compile autotuning in between)
ROUTER_PENDING = (
    "SingleProcess AUTOTUNE benchmarking takes 1.3427 seconds and 8.8429 seconds precompiling\n"
    "[Router (Rust)] 2025-03-08 02:33:09 - INFO - Worker http://0.0.0.0:31000 health check is "
    "pending with error: error sending request for url (http://0.0.0.0:31000/health)\n"
)

# https://github.com/sgl-project/sglang/issues/2778 (the router's error as its title quotes it;
# the thread holds no log around it)
ROUTER_TIMEOUT = "Failed to create router: Timeout 300s waiting for workers to become healthy\n"

# ---------------------------------------------------------------------------- (f) TCP store

# https://github.com/pytorch/pytorch/pull/111805 (the store's first message said "workers")
STORE_WORKERS = (
    "torch.distributed.DistStoreError: Timed out after 6 seconds waiting for workers. 1/2 "
    "workers joined.\n"
)

# https://github.com/OpenRLHF/OpenRLHF/issues/1040 (vLLM rollout engines under Ray: 1 of 3)
STORE_CLIENTS = (
    "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/3 "
    "clients joined.\n"
)

# ---------------------------------------------------------------------------- (g) connect

# https://github.com/NVIDIA/nccl-tests/issues/166 (NCCL's socket layer, two ranks)
NCCL_SOCKET = (
    "ubuntu:39964:40075 [0] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to "
    "10.0.0.2<45763> failed : Software caused connection abort\n"
    "ubuntu:39964:40044 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by "
    "remote peer node1<57557>\n"
)

# https://github.com/hpcaitech/Open-Sora/issues/667 (PyTorch's store client, IPv4-mapped and
# plain addresses)
C10D_CONNECT = (
    "[W socket.cpp:697] [c10d] The client socket has failed to connect to "
    "[::ffff:0.104.99.143]:47389 (errno: 110 - Connection timed out).\n"
    "[W socket.cpp:697] [c10d] The client socket has failed to connect to 0.104.99.143:47389 "
    "(errno: 110 - Connection timed out).\n"
)

# https://github.com/vllm-project/vllm/issues/19670 (vLLM workers, the store never answered)
C10D_TIMEOUT = (
    "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while "
    "trying to connect to (172.17.0.9, 46229).\n"
)

# https://github.com/pytorch/pytorch/issues/108732 (a Gloo group whose peer refused; gloo's
# own pair.cc message)
GLOO_REFUSED = (
    "RuntimeError: [/opt/conda/conda-bld/pytorch_1682343967769/work/third_party/gloo/gloo/"
    "transport/tcp/pair.cc:799] connect [172.31.71.170]:13195: Connection refused\n"
)

# https://github.com/vllm-project/vllm-ascend/issues/3464 (a complete 8-rank Gloo mesh)
GLOO_COMPLETE = (
    "[Gloo] Rank 1 is connected to 7 peer ranks. Expected number of connected peer ranks is : 7\n"
    "[Gloo] Rank 0 is connected to 7 peer ranks. Expected number of connected peer ranks is : 7\n"
)

# ---------------------------------------------------------------------------- (h) kernel log

# https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1150 (journalctl -k, Xid 45 after
# NVLink Xids 145/149, process python3)
KERNEL_XID = (
    "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by "
    "previous Xid 149\n"
    "kernel: NVRM: Xid (PCI:0000:ed:00): 45, pid=1818992, name=python3, Ch 0000000c caused by "
    "previous Xid 145\n"
)

# https://github.com/leptonai/gpud/pull/117 (dmesg -T)
KERNEL_XID_DMESG_T = (
    "[Sat Oct 12 18:35:32 2024] NVRM: Xid (PCI:0000:61:00): 45, pid=1496200, "
    "name=distprovers-gpu, Ch 0000000a\n"
)

# https://github.com/NVIDIA/nvtrust/issues/124 (dmesg, NVSwitch SXid)
KERNEL_SXID = (
    "[   38.178720] nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Non-fatal, Link 44 Minion "
    "Link DLREQ interrupt\n"
)

# https://github.com/leptonai/gpud/pull/338 (dmesg with level and ISO time)
KERNEL_SXID_LEVEL = (
    "kern  :err   : 2025-01-25T10:34:54,859532+00:00 nvidia-nvswitch1: SXid (PCI:0000:84:00.0): "
    "12028, Data {0x000001c0, 0x00bd5c8a, 0x00000500, 0x00000064, 0x00000000, 0x40008000, "
    "0x5a001100, 0x00000000, 0x00000000}\n"
)

# https://github.com/Bumblebee-Project/Bumblebee/issues/554 (an older driver's wording)
KERNEL_OFF_BUS_OLD = "[   49.261458] NVRM: GPU at 0000:01:00.0 has fallen off the bus.\n"

# https://github.com/NVIDIA/NVSentinel/issues/155 (a newer driver splits it over three lines)
KERNEL_OFF_BUS_SPLIT = (
    "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
    "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
    "               NVRM: fallen off the bus and is not responding to commands.\n"
)
