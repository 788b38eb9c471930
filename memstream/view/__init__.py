"""``memstream view``: a run as one self-contained page to watch in the browser (:mod:`memstream.view.page`)."""

from memstream.view.browser import Browser, frame_rate
from memstream.view.page import write_page
from memstream.view.serve import serve

__all__ = ["Browser", "frame_rate", "serve", "write_page"]
