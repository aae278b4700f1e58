"""Pages, style and script of the documentation UI (package data of ``plumbline.gateway``)."""
