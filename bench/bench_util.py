"""What the benchmark scripts share (they run as `python bench/<script>.py`, so this folder is on
the import path)."""
import subprocess


def cpu_model():
    """The CPU's model name, as every benchmark table reports it."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"
