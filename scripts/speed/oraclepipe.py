"""oraclepipe: one oracle process driven over stdio, as the speed scripts here drive it:
spawn it, send one request and read its answer (matched by id), wait until no engine is
starting, shut it down. stderr is discarded, written to a file, or kept line by line
(logs)."""
import json, queue, subprocess, threading, time


class Oracle:
    def __init__(self, argv, stderr=subprocess.DEVNULL, keep_log=False):
        self.logs = []
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE if keep_log else stderr, text=True, bufsize=1)
        self.pid = self.p.pid
        self._answers = queue.Queue()
        threading.Thread(target=lambda: [self._answers.put(l) for l in self.p.stdout], daemon=True).start()
        if keep_log:
            threading.Thread(target=lambda: [self.logs.append(l) for l in self.p.stderr], daemon=True).start()

    def call(self, request):
        """Sends request and returns its answer (answers to other ids are dropped)."""
        self.p.stdin.write(json.dumps(request) + "\n"); self.p.stdin.flush()
        while True:
            a = json.loads(self._answers.get())
            if a.get("id") == request["id"]: return a

    def wait_ready(self):
        """Polls ping until every engine has launched (none is starting)."""
        while True:
            st = self.call({"id": "ping", "op": "ping"}).get("states", {})
            if st and all(v.get("state") != "starting" for v in st.values()): return
            time.sleep(0.2)

    def shutdown(self):
        self.call({"id": "bye", "op": "shutdown"}); self.p.wait(timeout=60)
