"""The desktop shell: a pywebview window (Qt backend) on the in-process server."""
