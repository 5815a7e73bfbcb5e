#!/usr/bin/env python3
"""Cuts a page for a screenshot: its head and the part of its body from the first occurrence
of FROM to the first occurrence of TO after it (or the end), as a page of its own; with
--search ID TEXT, TEXT is typed in the flame graph ID's search box (scripts/profile-screens.sh).

    scripts/screen-cut.py PAGE OUT FROM [TO] [--search ID TEXT]
"""
import re
import sys


def main(argv):
    search = None
    if "--search" in argv:
        i = argv.index("--search")
        search, argv = argv[i + 1:i + 3], argv[:i]
    page, out, start = argv[:3]
    html = open(page, encoding="utf-8").read()
    head = html[:html.index("<body>") + len("<body>")]
    # The page's scripts (the flame graphs' search) wherever they were.
    scripts = re.findall(r"<script>.*?</script>", html, re.S)
    begin = html.index(start)
    # FROM inside a chart (its title): the cut starts at that chart.
    if html.rfind("<svg", 0, begin) > html.rfind("</svg>", 0, begin):
        begin = html.rfind("<svg", 0, begin)
    end = html.find(argv[3], begin + len(start)) if len(argv) > 3 else -1
    body = html[begin:end if end >= 0 else len(html)]
    script = ""
    if search:
        fid, text = search
        script = ("<script>var b=document.querySelector(\"input[oninput*='%s']\");"
                  "b.value='%s';bsFlame(b,'%s');</script>" % (fid, text, fid))
    with open(out, "w", encoding="utf-8") as f:
        f.write(head + "".join(scripts) + body + script + "</body></html>\n")


if __name__ == "__main__":
    main(sys.argv[1:])
