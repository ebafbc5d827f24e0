//! The one JSON shape the ABI returns: an object of strings,
//! `{"model name": "model id", ...}` (rung_job_model_ids_json). A small
//! hand-written parser, so the crate needs no dependency.

use std::collections::BTreeMap;

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Parser<'a> {
    fn skip_space(&mut self) {
        while let Some(&c) = self.text.get(self.at) {
            if c == b' ' || c == b'\t' || c == b'\n' || c == b'\r' {
                self.at += 1;
            } else {
                break;
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn expect(&mut self, want: u8) -> Result<(), String> {
        self.skip_space();
        match self.peek() {
            Some(c) if c == want => {
                self.at += 1;
                Ok(())
            }
            Some(c) => Err(format!("expected '{}' at byte {}, found '{}'", want as char, self.at, c as char)),
            None => Err(format!("expected '{}' at byte {}, found the end", want as char, self.at)),
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .text
            .get(self.at..self.at + 4)
            .ok_or_else(|| format!("a \\u escape at byte {} is cut short", self.at))?;
        let digits = std::str::from_utf8(digits).map_err(|_| format!("a bad \\u escape at byte {}", self.at))?;
        let value =
            u32::from_str_radix(digits, 16).map_err(|_| format!("a bad \\u escape at byte {}: {}", self.at, digits))?;
        self.at += 4;
        Ok(value)
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = self.peek().ok_or_else(|| "a string is not closed".to_string())?;
            self.at += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = self.peek().ok_or_else(|| "an escape is cut short".to_string())?;
                    self.at += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let first = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&first) {
                                // A high surrogate: its low half must follow as another \u escape.
                                if self.text.get(self.at..self.at + 2) != Some(&b"\\u"[..]) {
                                    return Err(format!("a lone surrogate \\u{:04x}", first));
                                }
                                self.at += 2;
                                let second = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&second) {
                                    return Err(format!("a lone surrogate \\u{:04x}", first));
                                }
                                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                            } else {
                                first
                            };
                            std::char::from_u32(code).ok_or_else(|| format!("a lone surrogate \\u{:04x}", code))?
                        }
                        other => return Err(format!("an unknown escape \\{}", other as char)),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                c if c < 0x20 => return Err(format!("a control character in a string at byte {}", self.at - 1)),
                c => out.push(c),
            }
        }
        // The input was a str and escapes add whole characters, so this holds.
        String::from_utf8(out).map_err(|_| "a string is not UTF-8".to_string())
    }
}

/// Parses `{"key": "value", ...}`; a later duplicate key wins.
pub(crate) fn parse_string_map(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut p = Parser { text: text.as_bytes(), at: 0 };
    let mut map = BTreeMap::new();
    p.expect(b'{')?;
    p.skip_space();
    if p.peek() == Some(b'}') {
        p.at += 1;
    } else {
        loop {
            let key = p.string()?;
            p.expect(b':')?;
            p.skip_space();
            let value = p.string()?;
            map.insert(key, value);
            p.skip_space();
            match p.peek() {
                Some(b',') => p.at += 1,
                Some(b'}') => {
                    p.at += 1;
                    break;
                }
                _ => return Err(format!("expected ',' or '}}' at byte {}", p.at)),
            }
        }
    }
    p.skip_space();
    if p.at != p.text.len() {
        return Err(format!("text after the object at byte {}", p.at));
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::parse_string_map;

    #[test]
    fn empty_object() {
        assert!(parse_string_map("{}").unwrap().is_empty());
        assert!(parse_string_map(" { } \n").unwrap().is_empty());
    }

    #[test]
    fn pairs() {
        let m = parse_string_map(r#"{"ppocr_cls":"ppocr_cls", "det" : "ppocr_det_v4_i8"}"#).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m["ppocr_cls"], "ppocr_cls");
        assert_eq!(m["det"], "ppocr_det_v4_i8");
    }

    #[test]
    fn escapes() {
        let m = parse_string_map(r#"{"a\"b\\c\/d":"\n\t\r\b\f","\u00e9\u4e2d":"\ud83d\ude00","ü":"x"}"#).unwrap();
        assert_eq!(m["a\"b\\c/d"], "\n\t\r\u{8}\u{c}");
        assert_eq!(m["é中"], "😀");
        assert_eq!(m["ü"], "x");
    }

    #[test]
    fn malformed() {
        for bad in [
            "",
            "[]",
            "{",
            r#"{"a"}"#,
            r#"{"a":}"#,
            r#"{"a":"b",}"#,
            r#"{"a":"b"} x"#,
            r#"{"a":"b"#,
            r#"{"a":"\x"}"#,
            r#"{"a":"\u12"}"#,
            r#"{"a":"\ud800"}"#,
            r#"{"a":"\udc00"}"#,
            "{\"a\":\"\n\"}",
            r#"{"a":1}"#,
        ] {
            assert!(parse_string_map(bad).is_err(), "accepted {:?}", bad);
        }
    }
}
