from .cli import run

# A guard, so that importing this module (`python -m libcst.tool list` imports every module of
# a configured package) does not run the CLI.
if __name__ == "__main__":
    run()
