"""Peer of the compute-sanitizer XML case: stream the report with
ElementTree.iterparse, count records by kind and error records by kernel
and line, printing the 20 most frequent (what a user would script)."""
import collections
import sys
import xml.etree.ElementTree as ET

kinds = collections.Counter()
sites = collections.Counter()
for _, el in ET.iterparse(sys.argv[1], events=("end",)):
    if el.tag != "record":
        continue
    kind = el.findtext("kind")
    kinds[kind] += 1
    sites[(kind, el.findtext("where/func"), el.findtext("where/file"), el.findtext("where/line"))] += 1
    el.clear()
for site, n in sites.most_common(20):
    print(n, *site)
print(dict(kinds))
