"""File handling: two-tier ZIP/folder reading (``archive``) and Excel I/O (``excel``)."""
