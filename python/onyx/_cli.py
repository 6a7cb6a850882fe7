"""The `onyx` console script: runs the C++ command shipped in the package (onyx/bin/onyx)."""
import os
import sys


def binary_path():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "onyx")


def main():
    if sys.argv[1:2] == ["quantize"]:  # the quantizer is Python (onyx.quantization)
        from onyx.quantization.cli import main as quantize_main
        return quantize_main(sys.argv[2:])
    path = binary_path()
    if not os.path.exists(path):
        sys.stderr.write(f"onyx: the command's binary is missing from the package ({path})\n")
        return 127
    # exec keeps the exit code, signals and streams exactly the binary's.
    os.execv(path, [path, *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
