#!/usr/bin/env python3
"""bench/gpu/mps_after_kill.py: what makes a GPU usable again after an MPS client was SIGKILLed mid-kernel.

Shared-GPU mode runs its own MPS daemon exactly as here (`nvidia-cuda-mps-control -f`, a private
CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY). Each case poisons a daemon (a client spinning in a
kernel, SIGKILLed), then tries one way back and times it with probe clients (CUDA driver API through
ctypes: context, allocation, a 1 ms kernel, synchronise):

  recover_spin   the killed client's kernel would have ended 10 s later: does the server recover alone?
  recover_nccl   two torch ranks (NCCL over the network path, one host id each): rank 0 SIGKILLed inside
                 an all_reduce, rank 1 SIGTERMed in a kernel (what torchrun does): does it recover alone?
  fresh_daemon   a second daemon on a new pipe directory while the poisoned server still runs, then
                 after the old one's `quit`
  same_pipe      `shutdown_server PID -f` on the poisoned server, then SIGKILL of the server, then a new
                 control daemon on the same pipe directory
  time_sliced    a client without MPS while the poisoned server still runs

Writes OUT/summary.txt (one line per step, with seconds), OUT/results.json and OUT/logs.tar.gz (the MPS
control and server logs of every daemon, the clients' output). Usage: mps_after_kill.py OUT [CASE...]
Nothing it starts outlives it: each daemon and client has a process group of its own, killed at the end.
"""
import ctypes
import json
import os
import signal
import subprocess
import sys
import tarfile
import time

CTL = "nvidia-cuda-mps-control"
PTX = rb"""
.version 6.0
.target sm_60
.address_size 64
.visible .entry spin(.param .u64 spin_ns)
{
  .reg .pred %p;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [spin_ns];
  mov.u64 %rd2, %globaltimer;
LOOP:
  mov.u64 %rd3, %globaltimer;
  sub.s64 %rd4, %rd3, %rd2;
  setp.lt.u64 %p, %rd4, %rd1;
  @%p bra LOOP;
  ret;
}
"""


# ---------------------------------------------------------------------------------------------- client
def client(mode, seconds):
    """One MPS client through the driver API: 'probe' (1 ms kernel) or 'spin' (a kernel of `seconds`)."""
    t0 = time.monotonic()
    cu = ctypes.CDLL("libcuda.so.1")

    def call(step, fn, *args):
        rc = fn(*args)
        if rc != 0:
            name, text = ctypes.c_char_p(), ctypes.c_char_p()
            cu.cuGetErrorName(rc, ctypes.byref(name))
            cu.cuGetErrorString(rc, ctypes.byref(text))
            print(json.dumps({"ok": False, "step": step, "rc": rc,
                              "error": (name.value or b"?").decode() + ": " + (text.value or b"?").decode(),
                              "s": round(time.monotonic() - t0, 3)}), flush=True)
            sys.exit(1)

    dev, ctx, mod, fn, ptr = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint64()
    call("cuInit", cu.cuInit, 0)
    call("cuDeviceGet", cu.cuDeviceGet, ctypes.byref(dev), 0)
    call("cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain, ctypes.byref(ctx), dev)
    call("cuCtxSetCurrent", cu.cuCtxSetCurrent, ctx)
    call("cuMemAlloc", cu.cuMemAlloc_v2, ctypes.byref(ptr), ctypes.c_size_t(1 << 20))
    call("cuModuleLoadData", cu.cuModuleLoadData, ctypes.byref(mod), ctypes.c_char_p(PTX))
    call("cuModuleGetFunction", cu.cuModuleGetFunction, ctypes.byref(fn), mod, b"spin")
    ns = ctypes.c_uint64(int(seconds * 1e9) if mode == "spin" else 1_000_000)
    params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.pointer(ns), ctypes.c_void_p))
    blocks = 8 if mode == "spin" else 1
    call("cuLaunchKernel", cu.cuLaunchKernel, fn, blocks, 1, 1, 32, 1, 1, 0, None, params, None)
    if mode == "spin":
        print(json.dumps({"spinning": True, "s": round(time.monotonic() - t0, 3)}), flush=True)
    call("cuCtxSynchronize", cu.cuCtxSynchronize)
    print(json.dumps({"ok": True, "s": round(time.monotonic() - t0, 3)}), flush=True)


def nccl_rank(rank, port):
    """A torch rank: a few all_reduces, then rank 0 waits in one its peer never joins, rank 1 spins."""
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    x = torch.ones(1 << 20, device="cuda")
    for _ in range(3):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    if rank == 0:
        dist.all_reduce(x)  # rank 1 never joins: the NCCL kernel waits on the network
        print("in-collective", flush=True)
        torch.cuda.synchronize()
    else:
        print("in-kernel", flush=True)
        while True:
            torch.cuda._sleep(1 << 30)
            torch.cuda.synchronize()


# ------------------------------------------------------------------------------------------- harness
OUT = None
GROUPS = []  # process groups this script started
LOG = []
RESULTS = {}
T_START = time.monotonic()


def say(text):
    line = f"[{time.monotonic() - T_START:7.2f}] {text}"
    print(line, flush=True)
    LOG.append(line)


def spawn(argv, env, log_name):
    out = open(os.path.join(OUT, "logs", log_name), "ab")
    p = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    GROUPS.append(p.pid)
    return p


def killpg(pid, sig=signal.SIGKILL):
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


def base_env():
    env = dict(os.environ)
    env["NCCL_NVLS_ENABLE"] = "0"
    for k in ("CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"):
        env.pop(k, None)
    return env


class Daemon:
    """A control daemon as ncclfi starts one: foreground, private pipe and log directories."""

    def __init__(self, name, pipe_dir=None):
        self.name = name
        self.pipe = pipe_dir or f"/tmp/mpsm-{name}"
        self.logdir = os.path.join(OUT, "logs", name)
        os.makedirs(self.pipe, exist_ok=True)
        os.makedirs(self.logdir, exist_ok=True)
        self.env = base_env()
        self.env["CUDA_MPS_PIPE_DIRECTORY"] = self.pipe
        self.env["CUDA_MPS_LOG_DIRECTORY"] = self.logdir
        t0 = time.monotonic()
        self.proc = spawn([CTL, "-f"], self.env, f"{name}/control.out")
        while not os.path.exists(self.pipe + "/control") and self.proc.poll() is None:
            if time.monotonic() - t0 > 10:
                break
            time.sleep(0.02)
        say(f"{name}: control daemon pid {self.proc.pid} serving={os.path.exists(self.pipe + '/control')} "
            f"after {time.monotonic() - t0:.2f} s (pipe {self.pipe})")

    def command(self, text, timeout=15):
        t0 = time.monotonic()
        try:
            r = subprocess.run([CTL], input=text + "\n", env=self.env, capture_output=True, text=True,
                               timeout=timeout)
            out = (r.stdout + r.stderr).strip()
        except subprocess.TimeoutExpired:
            out = f"(no answer in {timeout} s)"
        say(f"{self.name}: `{text}` -> {out!r} in {time.monotonic() - t0:.2f} s")
        return out

    def servers(self):
        return [int(w) for w in self.command("get_server_list", 5).split() if w.isdigit()]

    def quit(self):
        t0 = time.monotonic()
        servers = self.servers()
        self.command("quit", 6)
        try:
            self.proc.wait(6)
        except subprocess.TimeoutExpired:
            pass
        gone = self.proc.poll() is not None
        alive = [s for s in servers if os.path.exists(f"/proc/{s}")]
        say(f"{self.name}: after quit: control daemon exited={gone}, servers still alive={alive}, "
            f"{time.monotonic() - t0:.2f} s")
        return gone, alive

    def kill(self):
        """The daemon's group, and any process that still carries its pipe directory (its server)."""
        killpg(self.proc.pid)
        self.proc.wait()
        mark = f"CUDA_MPS_PIPE_DIRECTORY={self.pipe}".encode()
        for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
            try:
                carries = mark in open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
            except OSError:
                continue
            if carries and int(pid) != os.getpid():
                say(f"{self.name}: SIGKILL to pid {pid}, still alive with this daemon's pipe directory")
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass


def client_env(daemon):
    if daemon is None:  # no MPS: a pipe directory with no daemon in it
        env = base_env()
        os.makedirs("/tmp/mpsm-none", exist_ok=True)
        env["CUDA_MPS_PIPE_DIRECTORY"] = "/tmp/mpsm-none"
        return env
    return dict(daemon.env)


def probe(daemon, label, timeout=8, quiet=False):
    t0 = time.monotonic()
    try:
        r = subprocess.run([sys.executable, __file__, "--client", "probe", "0"], env=client_env(daemon),
                           capture_output=True, text=True, timeout=timeout, start_new_session=True)
        lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
        res = json.loads(lines[-1]) if lines else {"ok": False, "error": (r.stdout + r.stderr)[-300:]}
    except subprocess.TimeoutExpired:
        res = {"ok": False, "error": f"probe hung {timeout} s"}
    res["wall_s"] = round(time.monotonic() - t0, 2)
    if not quiet:
        say(f"probe {label}: {json.dumps(res)}")
    return res


def probe_until(daemon, label, max_s, every_s=1.0):
    """Probes until one succeeds or max_s passed; returns (seconds to the first success or None, errors)."""
    t0 = time.monotonic()
    errors = {}
    while True:
        res = probe(daemon, label, quiet=True)
        key = res.get("error", "?")
        if res["ok"] or key not in errors:  # the first of each answer, and the success
            say(f"probe {label} at +{time.monotonic() - t0:.2f} s: {json.dumps(res)}")
        if res["ok"]:
            return round(time.monotonic() - t0, 2), errors
        errors[key] = errors.get(key, 0) + 1
        if time.monotonic() - t0 >= max_s:
            say(f"probe {label}: no success in {max_s} s ({sum(errors.values())} probes)")
            return None, errors
        time.sleep(every_s)


def poison(daemon, spin_s=300):
    """A client spinning in a kernel of spin_s, SIGKILLed 1 s into it. Returns when it is reaped."""
    victim = spawn([sys.executable, __file__, "--client", "spin", str(spin_s)], client_env(daemon),
                   f"{daemon.name}/victim.out")
    t0 = time.monotonic()
    spinning = False
    path = os.path.join(OUT, "logs", daemon.name, "victim.out")
    while time.monotonic() - t0 < 30 and victim.poll() is None:
        if "spinning" in open(path).read():
            spinning = True
            break
        time.sleep(0.05)
    time.sleep(1)
    if victim.poll() is None:
        os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    say(f"{daemon.name}: victim pid {victim.pid} spinning={spinning} (after {time.monotonic() - t0 - 1:.2f} s), "
        f"SIGKILLed mid-kernel, reaped")
    return spinning


def server_log(daemon, last=12):
    path = os.path.join(daemon.logdir, "server.log")
    lines = open(path, errors="replace").read().splitlines() if os.path.exists(path) else []
    for l in lines[-last:]:
        say(f"  {daemon.name}/server.log: {l}")
    return lines


# --------------------------------------------------------------------------------------------- cases
def case_recover_spin():
    d = Daemon("spin")
    RESULTS["clean_first_client"] = probe(d, "fresh daemon, first client")
    poison(d, spin_s=11)  # the kernel would end 10 s after the kill
    RESULTS["recover_spin"] = probe_until(d, "same daemon after kill (kernel ends in 10 s)", 20)
    server_log(d)
    d.quit()
    d.kill()


def case_recover_nccl():
    d = Daemon("nccl")
    port = 29000 + os.getpid() % 1000
    ranks = []
    for r in (0, 1):
        env = client_env(d)
        env.update({"NCCL_HOSTID": f"mpsm-{r}", "CUDA_VISIBLE_DEVICES": "0", "NCCL_DEBUG": "WARN"})
        ranks.append(spawn([sys.executable, __file__, "--nccl-rank", str(r), str(port)], env, f"nccl/rank{r}.out"))
    t0 = time.monotonic()
    ready = False
    while time.monotonic() - t0 < 60:
        text = [open(os.path.join(OUT, "logs", "nccl", f"rank{r}.out"), errors="replace").read() for r in (0, 1)]
        if "in-collective" in text[0] and "in-kernel" in text[1]:
            ready = True
            break
        if any(p.poll() is not None for p in ranks):
            break
        time.sleep(0.1)
    say(f"nccl: ranks ready={ready} after {time.monotonic() - t0:.2f} s")
    time.sleep(1)
    os.kill(ranks[0].pid, signal.SIGKILL)
    time.sleep(0.5)
    os.kill(ranks[1].pid, signal.SIGTERM)
    for p in ranks:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            killpg(p.pid)
            p.wait()
    say(f"nccl: rank 0 SIGKILLed in its all_reduce, rank 1 SIGTERMed in a kernel: exits "
        f"{ranks[0].returncode} {ranks[1].returncode}")
    RESULTS["recover_nccl"] = probe_until(d, "same daemon after the NCCL job was killed", 15)
    server_log(d)
    # The remedy candidate on the real failure: a fresh daemon while the poisoned server still runs.
    d2 = Daemon("nccl-fresh")
    RESULTS["nccl_fresh_daemon"] = probe_until(d2, "fresh daemon beside the poisoned one (NCCL job)", 5)
    d.quit()
    d.kill()
    d2.quit()
    d2.kill()


def case_fresh_daemon():
    d = Daemon("old")
    poison(d)
    probe(d, "old daemon after kill")
    fresh = Daemon("fresh")
    RESULTS["fresh_beside_poisoned"] = probe_until(fresh, "fresh daemon, poisoned server still up", 5)
    server_log(fresh, 6)
    RESULTS["quit_poisoned"] = d.quit()
    RESULTS["fresh_after_quit"] = probe_until(fresh, "fresh daemon after the old one's quit", 5)
    d.kill()
    fresh.quit()
    fresh.kill()


def case_same_pipe():
    d = Daemon("same")
    poison(d)
    probe(d, "after kill")
    servers = d.servers()
    for pid in servers:
        d.command(f"shutdown_server {pid} -f", 10)
    time.sleep(0.5)
    say(f"same: servers alive after shutdown_server -f: {[s for s in servers if os.path.exists(f'/proc/{s}')]}")
    RESULTS["same_after_shutdown_server"] = probe_until(d, "same daemon after shutdown_server -f", 5)
    if RESULTS["same_after_shutdown_server"][0] is None:
        for pid in d.servers():
            if os.path.exists(f"/proc/{pid}"):
                os.kill(pid, signal.SIGKILL)
            say(f"same: SIGKILL to server {pid}")
        time.sleep(0.5)
        RESULTS["same_after_server_kill"] = probe_until(d, "same daemon after the server was SIGKILLed", 5)
    server_log(d, 8)
    d.quit()
    d.kill()
    again = Daemon("same-again", pipe_dir=d.pipe)
    RESULTS["same_pipe_new_daemon"] = probe_until(again, "new control daemon, same pipe directory", 5)
    again.quit()
    again.kill()


def case_time_sliced():
    d = Daemon("ts")
    poison(d)
    RESULTS["time_sliced_beside_poisoned"] = probe_until(None, "no MPS, poisoned server still up", 5)
    d.quit()
    d.kill()


CASES = {"recover_spin": case_recover_spin, "recover_nccl": case_recover_nccl, "fresh_daemon": case_fresh_daemon,
         "same_pipe": case_same_pipe, "time_sliced": case_time_sliced}


def main():
    global OUT
    OUT = os.path.abspath(sys.argv[1])
    os.makedirs(os.path.join(OUT, "logs"), exist_ok=True)
    names = sys.argv[2:] or list(CASES)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))  # a timeout still leaves the logs
    say("nvidia-smi: " + subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,compute_mode",
                                         "--format=csv,noheader"], capture_output=True, text=True).stdout.strip())
    try:
        for name in names:
            say(f"=== {name}")
            try:
                CASES[name]()
            except Exception as e:  # one case's surprise must not cost the others
                say(f"{name}: error {e!r}")
    finally:
        for pid in GROUPS:
            killpg(pid)
        left = subprocess.run(["pgrep", "-a", "-f", "nvidia-cuda-mps"], capture_output=True, text=True).stdout
        say(f"left after cleanup: {left.strip()!r}")
        with open(os.path.join(OUT, "summary.txt"), "w") as f:
            f.write("\n".join(LOG) + "\n")
        with open(os.path.join(OUT, "results.json"), "w") as f:
            json.dump(RESULTS, f, indent=1)
        with tarfile.open(os.path.join(OUT, "logs.tar.gz"), "w:gz") as tar:
            tar.add(os.path.join(OUT, "logs"), arcname="logs")
        subprocess.run(["rm", "-rf", os.path.join(OUT, "logs")])


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        client(sys.argv[2], float(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--nccl-rank":
        nccl_rank(int(sys.argv[2]), int(sys.argv[3]))
    else:
        main()
