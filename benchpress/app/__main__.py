"""`python -m benchpress.app [--host H] [--port P] [--snapshot S] [--home DIR]`."""

from benchpress.cli.serve_cmds import serve

if __name__ == "__main__":
    serve(prog_name="python -m benchpress.app")
