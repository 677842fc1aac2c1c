"""The most GPU memory in use while a step ran, as the driver counts it (nvidia-smi).

A step runs in processes of its own (the trainer, accelerate's workers, an Azure ML job's
command), whose `torch.cuda.max_memory_allocated` this process cannot read: the driver's figure
covers them all, CUDA contexts and ONNX Runtime's arena included. None without nvidia-smi.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from types import TracebackType

QUERY = ["--query-gpu=memory.used", "--format=csv,noheader,nounits", "--id=0"]


class PeakMemory:
    """`with PeakMemory() as m:` samples every `every` seconds; `m.peak_mib` afterwards."""

    def __init__(self, every: float = 0.5) -> None:
        self.every = every
        self.peak_mib: int | None = None
        self._smi = shutil.which("nvidia-smi")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> PeakMemory:
        if self._smi:
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _sample(self) -> None:
        while True:
            used = self._read()
            if used is not None:
                self.peak_mib = max(used, self.peak_mib or 0)
            if self._stop.wait(self.every):
                return

    def _read(self) -> int | None:
        answer = subprocess.run(
            [str(self._smi), *QUERY], capture_output=True, text=True, timeout=10, check=False
        )
        first = answer.stdout.strip().splitlines()[:1]
        return int(first[0]) if answer.returncode == 0 and first and first[0].isdigit() else None
