package table

// Result tables of the generic previews' projections. The preview
// projection's results are the tables it reads (preview.outline,
// preview.fields, preview.records, text.lines), selected and bounded, so
// they keep those schemas; the text-fragment projection cuts text.lines
// rows to a window and writes them under a name of its own.

// TextFragmentLines is the text.fragment_lines schema: the rows of one
// decoded text.lines table that fall inside the requested byte or line
// window, a byte window's edge rows clipped to it exactly.
var TextFragmentLines = Define[TextLine]("text.fragment_lines", "lines of a text artifact clipped to a requested byte or line window")
