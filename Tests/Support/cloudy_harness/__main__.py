"""Command line for shell scripts: `python3 Tests/Support/cloudy_harness COMMAND`.

    exporter-binary [DEFAULT...]   prints the cloudy_exporter to use: $CLOUDY_EXPORTER when set,
                                   else the first built DEFAULT (relative to the repository
                                   root; default .build/debug then .build/release); exit status 1
                                   and nothing printed when there is none
"""

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a directory: make the package importable by its name
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cloudy_harness import DEBUG_EXPORTER, RELEASE_EXPORTER, exporter_binary  # noqa: E402


def main(argv: list[str]) -> int:
    command, rest = (argv[0], argv[1:]) if argv else ("", [])
    if command == "exporter-binary":
        binary = exporter_binary(*(rest or [DEBUG_EXPORTER, RELEASE_EXPORTER]))
        if binary is None:
            return 1
        print(binary)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
