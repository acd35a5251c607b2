"""`querybot doctor`: checks of a deployment, in plain words."""
