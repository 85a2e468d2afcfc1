# cmake/embed_file.cmake - writes a file's bytes into a C++ source as an array, at build time:
#   cmake -DINPUT=web/viewer.html -DOUTPUT=serve_page.cpp -DSYMBOL=kServePage -P embed_file.cmake
# defines `extern const unsigned char SYMBOL[]` and `extern const std::size_t SYMBOL##Size`. Bytes, not a
# string literal, so nothing in the file (quotes, backslashes, ")delimiter") needs escaping.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes
       "${bytes}")
file(WRITE "${OUTPUT}.tmp"
     "// Generated from ${INPUT} by cmake/embed_file.cmake; do not edit.\n#include <cstddef>\n"
     "extern const unsigned char ${SYMBOL}[];\nextern const std::size_t ${SYMBOL}Size;\n"
     "const unsigned char ${SYMBOL}[] = {\n${bytes}0x00};\nconst std::size_t ${SYMBOL}Size = ${size};\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
