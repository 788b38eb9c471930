"""``python -m memstream.view PAGE.html[#FRAGMENT] OUT.png ...``: screenshots of pages (see :func:`browser.main`)."""

from memstream.view.browser import main

main()
