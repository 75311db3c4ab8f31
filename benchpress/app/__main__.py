"""`python -m benchpress.app [--host H] [--port P] [--snapshot S] [--home DIR]`."""

if __name__ == "__main__":
    from benchpress.cli import start_command

    start_command()  # where the app starts, before polars loads
    from benchpress.cli.serve_cmds import serve

    serve(prog_name="python -m benchpress.app")
