"""items: projects, the requirements tree and its configuration, and the ID space."""
