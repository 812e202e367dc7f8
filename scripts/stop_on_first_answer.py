"""SIGTERM on a server's first answer, start after start: how often `atlas serve` dies of it.

    python3 scripts/stop_on_first_answer.py BINARY FOLDER TRIALS [--requests N]

Each trial copies FOLDER (a data folder), starts `BINARY serve` on the copy, polls /healthz as
the tests do (a new connection every 50 ms until one answers), makes N more requests (0 by
default), sends SIGTERM, and records how the process ended. Prints one JSON line: trials, how
many died of the signal, how many exited 0, how many otherwise. Run it with two other processes
keeping both cores busy (`python3 -c "while True: pass"`, twice) to see what a loaded CI machine
sees. Issue 76 found 9 of 40 starts of main 6ca3471 dying this way, 0 of 40 after it.
"""
import argparse, json, os, shutil, signal, socket, subprocess, tempfile, time, urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("binary")
parser.add_argument("folder")
parser.add_argument("trials", type=int)
parser.add_argument("--requests", type=int, default=0)
args = parser.parse_args()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


died = clean = other = 0
with tempfile.TemporaryDirectory() as scratch:
    for trial in range(args.trials):
        data = os.path.join(scratch, f"data-{trial}")
        shutil.copytree(args.folder, data, symlinks=True)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [args.binary, "serve", "--data", data, "--addr", f"127.0.0.1:{port}", "--embedder", "hash"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while True:
            try:
                urllib.request.urlopen(url + "/healthz", timeout=20).read()
                break
            except Exception:
                time.sleep(0.05)
        for _ in range(args.requests):
            request = urllib.request.Request(url + "/api/v1/get_graph_stats", data=b"{}",
                                             headers={"Content-Type": "application/json"})
            urllib.request.urlopen(request, timeout=20).read()
        server.send_signal(signal.SIGTERM)
        status = server.wait()
        if status == -signal.SIGTERM:
            died += 1
        elif status == 0:
            clean += 1
        else:
            other += 1
        shutil.rmtree(data, ignore_errors=True)
print(json.dumps({"binary": args.binary, "trials": args.trials, "requests": args.requests,
                  "died_of_sigterm": died, "exited_0": clean, "other": other}))
