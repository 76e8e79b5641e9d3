//! Go's `fmt` for template values: `%v` printing, `print`, `println` and
//! `printf` with verbs, flags, width, precision and argument indexes, as
//! `fmt/print.go` and `fmt/format.go` do them.

use std::fmt::Write as _;

use super::super::program::Span;
use super::super::render::Result;
use super::super::value::{sorted_keys, Value};
use crate::options::Strictness;

/// Formatting flags of one verb.
#[derive(Clone, Copy, Debug, Default)]
struct Flags {
    wid: usize,
    prec: usize,
    wid_present: bool,
    prec_present: bool,
    minus: bool,
    plus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    plus_v: bool,
    sharp_v: bool,
}

/// Prints a value of an action as Go does (see [`super::print`]): a
/// missing one is an error unless lenient, null is `<no value>`, anything
/// else as `%v`.
pub(in crate::engine) fn print(
    out: &mut String,
    value: &Value<'_>,
    strictness: Strictness,
    span: Span,
) -> Result<()> {
    match value {
        Value::Missing => return super::print_missing(strictness, span),
        Value::Null => out.push_str("<no value>"),
        other => write_value(out, other),
    }
    Ok(())
}

/// Writes `value` as Go's `%v` does (`fmt.Fprint` of one operand).
pub(crate) fn write_value(out: &mut String, value: &Value<'_>) {
    match value {
        Value::Str(s) => out.push_str(s),
        Value::String(s) => out.push_str(s),
        Value::Int(i) => write_int(out, *i),
        Value::UInt(u) => out.push_str(&u.to_string()),
        Value::Float(x) => write_shortest_g(out, *x),
        _ => Printer {
            out,
            f: Flags::default(),
        }
        .print_arg(value, 'v', 0),
    }
}

/// Two decimal digits for each number below 100.
const DIGIT_PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// Writes an integer in decimal, as `%v` and `%d` without flags print it:
/// two digits at a time, without the machinery of `core::fmt`.
pub(crate) fn write_int(out: &mut String, value: i64) {
    // The longest is i64::MIN: a sign and 19 digits.
    let mut buf = [0u8; 20];
    let mut start = buf.len();
    let mut n = value.unsigned_abs();
    let mut put = |start: &mut usize, pair: u64| {
        let at = pair as usize * 2;
        *start -= 2;
        buf[*start..*start + 2].copy_from_slice(&DIGIT_PAIRS[at..at + 2]);
    };
    while n >= 100 {
        put(&mut start, n % 100);
        n /= 100;
    }
    if n >= 10 {
        put(&mut start, n);
    } else {
        start -= 1;
        buf[start] = b'0' + n as u8;
    }
    if value < 0 {
        start -= 1;
        buf[start] = b'-';
    }
    // ASCII digits and a sign, pushed as the characters they are (cheaper,
    // for a handful of bytes, than checking them as UTF-8; the mask tells
    // the compiler that each is one byte long).
    out.reserve(buf.len() - start);
    for &b in &buf[start..] {
        out.push(char::from(b & 0x7f));
    }
}

/// `fmt.Sprint`: spaces between operands when neither side is a string.
pub(crate) fn sprint(out: &mut String, args: &[Value<'_>]) {
    let mut prev_string = false;
    for (i, arg) in args.iter().enumerate() {
        let is_string = arg.as_str().is_some();
        if i > 0 && !is_string && !prev_string {
            out.push(' ');
        }
        write_value(out, arg);
        prev_string = is_string;
    }
}

/// `fmt.Sprintln`: spaces between all operands and a final newline.
pub(crate) fn sprintln(out: &mut String, args: &[Value<'_>]) {
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        write_value(out, arg);
    }
    out.push('\n');
}

/// `fmt.Sprintf`.
pub(crate) fn sprintf(out: &mut String, format: &str, args: &[Value<'_>]) {
    let mut p = Printer {
        out,
        f: Flags::default(),
    };
    p.do_printf(format, args);
}

struct Printer<'o> {
    out: &'o mut String,
    f: Flags,
}

fn parse_num(s: &[u8], start: usize, end: usize) -> (usize, bool, usize) {
    let mut num = 0usize;
    let mut is_num = false;
    let mut i = start;
    if start >= end {
        return (0, false, end);
    }
    while i < end && s.get(i).is_some_and(u8::is_ascii_digit) {
        if num > 1_000_000 {
            return (0, false, end);
        }
        num = num * 10 + usize::from(s[i] - b'0');
        is_num = true;
        i += 1;
    }
    (num, is_num, i)
}

/// `%[n]`: returns (index, bytes consumed, ok).
fn parse_arg_number(s: &[u8]) -> (usize, usize, bool) {
    if s.len() < 3 {
        return (0, 1, false);
    }
    for i in 1..s.len() {
        if s[i] == b']' {
            let (width, ok, newi) = parse_num(s, 1, i);
            if !ok || newi != i {
                return (0, i + 1, false);
            }
            return (width.wrapping_sub(1), i + 1, true);
        }
    }
    (0, 1, false)
}

fn int_from_arg(args: &[Value<'_>], arg_num: usize) -> (i64, bool, usize) {
    match args.get(arg_num) {
        Some(Value::Int(i)) if i.abs() <= 1_000_000 => (*i, true, arg_num + 1),
        Some(_) => (0, false, arg_num + 1),
        None => (0, false, arg_num),
    }
}

impl Printer<'_> {
    fn do_printf(&mut self, format: &str, args: &[Value<'_>]) {
        let bytes = format.as_bytes();
        let end = bytes.len();
        let mut arg_num = 0usize;
        let mut after_index;
        let mut reordered = false;
        let mut i = 0usize;
        'format: while i < end {
            let mut good_arg_num = true;
            let last = i;
            while i < end && bytes[i] != b'%' {
                i += 1;
            }
            if i > last {
                self.out.push_str(&format[last..i]);
            }
            if i >= end {
                break;
            }
            i += 1;
            self.f = Flags::default();
            while i < end {
                let c = bytes[i];
                match c {
                    b'#' => self.f.sharp = true,
                    b'0' => self.f.zero = !self.f.minus,
                    b'+' => self.f.plus = true,
                    b'-' => {
                        self.f.minus = true;
                        self.f.zero = false;
                    }
                    b' ' => self.f.space = true,
                    _ => {
                        if c.is_ascii_lowercase() && arg_num < args.len() {
                            if c == b'v' {
                                self.f.sharp_v = self.f.sharp;
                                self.f.sharp = false;
                                self.f.plus_v = self.f.plus;
                                self.f.plus = false;
                            }
                            self.print_arg(&args[arg_num], char::from(c), 0);
                            arg_num += 1;
                            i += 1;
                            continue 'format;
                        }
                        break;
                    }
                }
                i += 1;
            }

            // Argument index?
            (arg_num, i, after_index) = self.arg_number(
                arg_num,
                bytes,
                i,
                args.len(),
                &mut good_arg_num,
                &mut reordered,
            );

            // Width.
            if i < end && bytes[i] == b'*' {
                i += 1;
                let (num, ok, next) = int_from_arg(args, arg_num);
                arg_num = next;
                self.f.wid_present = ok;
                if !ok {
                    self.out.push_str("%!(BADWIDTH)");
                }
                if num < 0 {
                    self.f.minus = true;
                    self.f.zero = false;
                }
                self.f.wid = num.unsigned_abs() as usize;
                after_index = false;
            } else {
                let (num, ok, next) = parse_num(bytes, i, end);
                self.f.wid = num;
                self.f.wid_present = ok;
                i = next;
                if after_index && ok {
                    good_arg_num = false;
                }
            }

            // Precision.
            if i + 1 < end && bytes[i] == b'.' {
                i += 1;
                if after_index {
                    good_arg_num = false;
                }
                (arg_num, i, after_index) = self.arg_number(
                    arg_num,
                    bytes,
                    i,
                    args.len(),
                    &mut good_arg_num,
                    &mut reordered,
                );
                if i < end && bytes[i] == b'*' {
                    i += 1;
                    let (num, ok, next) = int_from_arg(args, arg_num);
                    arg_num = next;
                    self.f.prec_present = ok;
                    self.f.prec = num.max(0) as usize;
                    if num < 0 {
                        self.f.prec_present = false;
                    }
                    if !ok {
                        self.out.push_str("%!(BADPREC)");
                    }
                    after_index = false;
                } else {
                    let (num, ok, next) = parse_num(bytes, i, end);
                    self.f.prec = num;
                    self.f.prec_present = true;
                    if !ok {
                        self.f.prec = 0;
                    }
                    i = next;
                }
            }

            if !after_index {
                (arg_num, i, after_index) = self.arg_number(
                    arg_num,
                    bytes,
                    i,
                    args.len(),
                    &mut good_arg_num,
                    &mut reordered,
                );
            }
            let _ = after_index;

            if i >= end {
                self.out.push_str("%!(NOVERB)");
                break;
            }
            let verb = format[i..].chars().next().unwrap_or('?');
            i += verb.len_utf8();

            if verb == '%' {
                self.out.push('%');
            } else if !good_arg_num {
                self.bad_arg(verb, "BADINDEX");
            } else if arg_num >= args.len() {
                self.bad_arg(verb, "MISSING");
            } else {
                if verb == 'v' {
                    self.f.sharp_v = self.f.sharp;
                    self.f.sharp = false;
                    self.f.plus_v = self.f.plus;
                    self.f.plus = false;
                }
                self.print_arg(&args[arg_num], verb, 0);
                arg_num += 1;
            }
        }
        if !reordered && arg_num < args.len() {
            self.f = Flags::default();
            self.out.push_str("%!(EXTRA ");
            for (n, arg) in args[arg_num..].iter().enumerate() {
                if n > 0 {
                    self.out.push_str(", ");
                }
                if matches!(arg, Value::Null | Value::Missing) {
                    self.out.push_str("<nil>");
                } else {
                    self.out.push_str(arg.go_type());
                    self.out.push('=');
                    self.print_arg(arg, 'v', 0);
                }
            }
            self.out.push(')');
        }
    }

    fn arg_number(
        &mut self,
        arg_num: usize,
        s: &[u8],
        i: usize,
        num_args: usize,
        good: &mut bool,
        reordered: &mut bool,
    ) -> (usize, usize, bool) {
        if s.len() <= i || s[i] != b'[' {
            return (arg_num, i, false);
        }
        *reordered = true;
        let (index, wid, ok) = parse_arg_number(&s[i..]);
        if ok && index < num_args {
            return (index, i + wid, true);
        }
        *good = false;
        (arg_num, i + wid, ok)
    }

    fn bad_arg(&mut self, verb: char, what: &str) {
        self.out.push_str("%!");
        self.out.push(verb);
        self.out.push('(');
        self.out.push_str(what);
        self.out.push(')');
    }

    fn bad_verb(&mut self, verb: char, value: &Value<'_>) {
        self.out.push_str("%!");
        self.out.push(verb);
        self.out.push('(');
        if matches!(value, Value::Null | Value::Missing) {
            self.out.push_str("<nil>");
        } else {
            self.out.push_str(value.go_type());
            self.out.push('=');
            self.print_arg(value, 'v', 1);
        }
        self.out.push(')');
    }

    fn print_arg(&mut self, value: &Value<'_>, verb: char, depth: usize) {
        if verb == 'T' {
            self.pad_str(value.go_type());
            return;
        }
        match value {
            Value::Missing | Value::Null => {
                if depth > 0 {
                    if self.f.sharp_v {
                        self.pad_str("interface {}(nil)");
                    } else {
                        self.pad_str("<nil>");
                    }
                } else if verb == 'v' {
                    self.pad_str("<nil>");
                } else {
                    self.bad_verb(verb, value);
                }
            }
            Value::Bool(b) => match verb {
                't' | 'v' => self.pad_str(if *b { "true" } else { "false" }),
                _ => self.bad_verb(verb, value),
            },
            Value::Int(i) => self.fmt_int(*i, verb, value),
            // A uint64: the integer verbs (as Go's fmt; `%c`, `%q` and `%U`
            // of a number this large are not a character anyway).
            Value::UInt(u) => match verb {
                'v' | 'd' => self.fmt_magnitude(false, *u, 10, verb, false),
                'b' => self.fmt_magnitude(false, *u, 2, verb, false),
                'o' | 'O' => self.fmt_magnitude(false, *u, 8, verb, false),
                'x' => self.fmt_magnitude(false, *u, 16, verb, false),
                'X' => self.fmt_magnitude(false, *u, 16, verb, true),
                _ => self.bad_verb(verb, value),
            },
            Value::Float(x) => match verb {
                'v' => self.fmt_float(*x, 'g', None),
                'b' | 'g' | 'G' | 'x' | 'X' => self.fmt_float(*x, verb, None),
                'f' | 'e' | 'E' | 'F' => self.fmt_float(*x, verb, Some(6)),
                _ => self.bad_verb(verb, value),
            },
            Value::Str(s) => self.fmt_string(s, verb, value),
            Value::String(s) => self.fmt_string(s, verb, value),
            Value::Array(items) => {
                if self.f.sharp_v {
                    self.out.push_str("[]interface {}{");
                    for (n, item) in items.iter().enumerate() {
                        if n > 0 {
                            self.out.push_str(", ");
                        }
                        self.print_arg(&Value::from_json(item), verb, depth + 1);
                    }
                    self.out.push('}');
                    return;
                }
                self.out.push('[');
                for (n, item) in items.iter().enumerate() {
                    if n > 0 {
                        self.out.push(' ');
                    }
                    self.print_arg(&Value::from_json(item), verb, depth + 1);
                }
                self.out.push(']');
            }
            Value::Object(view) => {
                if self.f.sharp_v {
                    self.out.push_str("map[string]interface {}{");
                } else {
                    self.out.push_str("map[");
                }
                for (n, key) in sorted_keys(view).into_iter().enumerate() {
                    if n > 0 {
                        self.out.push_str(if self.f.sharp_v { ", " } else { " " });
                    }
                    self.print_arg(&Value::Str(key), verb, depth + 1);
                    self.out.push(':');
                    let item = view.get(key).map_or(Value::Null, Value::from_view);
                    self.print_arg(&item, verb, depth + 1);
                }
                self.out.push(if self.f.sharp_v { '}' } else { ']' });
            }
            Value::Json(json) => self.print_arg(&Value::from_json(json), verb, depth),
        }
    }

    fn write_padding(&mut self, n: usize) {
        let c = if self.f.zero { '0' } else { ' ' };
        self.out.extend(std::iter::repeat_n(c, n));
    }

    /// Pads `s` to the width (counted in characters).
    fn pad_str(&mut self, s: &str) {
        if !self.f.wid_present || self.f.wid == 0 {
            self.out.push_str(s);
            return;
        }
        let width = self.f.wid.saturating_sub(s.chars().count());
        if self.f.minus {
            self.out.push_str(s);
            self.write_padding(width);
        } else {
            self.write_padding(width);
            self.out.push_str(s);
        }
    }

    fn fmt_string(&mut self, s: &str, verb: char, value: &Value<'_>) {
        match verb {
            'v' if self.f.sharp_v => self.fmt_q(s),
            'v' | 's' => {
                let s = self.truncate(s);
                self.pad_str(s);
            }
            'x' => self.fmt_sx(s, b"0123456789abcdefx"),
            'X' => self.fmt_sx(s, b"0123456789ABCDEFX"),
            'q' => self.fmt_q(s),
            _ => self.bad_verb(verb, value),
        }
    }

    fn truncate<'s>(&self, s: &'s str) -> &'s str {
        if self.f.prec_present {
            if let Some((i, _)) = s.char_indices().nth(self.f.prec) {
                return &s[..i];
            }
        }
        s
    }

    fn fmt_sx(&mut self, s: &str, digits: &[u8; 17]) {
        let bytes = s.as_bytes();
        let mut length = bytes.len();
        if self.f.prec_present && self.f.prec < length {
            length = self.f.prec;
        }
        let mut width = 2 * length;
        if width > 0 {
            if self.f.space {
                if self.f.sharp {
                    width *= 2;
                }
                width += length - 1;
            } else if self.f.sharp {
                width += 2;
            }
        } else {
            if self.f.wid_present {
                self.write_padding(self.f.wid);
            }
            return;
        }
        if self.f.wid_present && self.f.wid > width && !self.f.minus {
            self.write_padding(self.f.wid - width);
        }
        if self.f.sharp {
            self.out.push('0');
            self.out.push(char::from(digits[16]));
        }
        for (i, &c) in bytes.iter().take(length).enumerate() {
            if self.f.space && i > 0 {
                self.out.push(' ');
                if self.f.sharp {
                    self.out.push('0');
                    self.out.push(char::from(digits[16]));
                }
            }
            self.out.push(char::from(digits[usize::from(c >> 4)]));
            self.out.push(char::from(digits[usize::from(c & 0xF)]));
        }
        if self.f.wid_present && self.f.wid > width && self.f.minus {
            self.write_padding(self.f.wid - width);
        }
    }

    fn fmt_q(&mut self, s: &str) {
        let s = self.truncate(s);
        if self.f.sharp && can_backquote(s) {
            let quoted = format!("`{s}`");
            self.pad_str(&quoted);
            return;
        }
        let quoted = quote(s, '"', self.f.plus);
        self.pad_str(&quoted);
    }

    fn fmt_int(&mut self, i: i64, verb: char, value: &Value<'_>) {
        match verb {
            'v' | 'd' => self.fmt_integer(i, 10, verb, false),
            'b' => self.fmt_integer(i, 2, verb, false),
            'o' | 'O' => self.fmt_integer(i, 8, verb, false),
            'x' => self.fmt_integer(i, 16, verb, false),
            'X' => self.fmt_integer(i, 16, verb, true),
            'c' => {
                let c = rune(i);
                let mut buf = [0; 4];
                let s: &str = c.encode_utf8(&mut buf);
                self.pad_str(s);
            }
            'q' => {
                let quoted = quote(&rune(i).to_string(), '\'', self.f.plus);
                self.pad_str(&quoted);
            }
            'U' => self.fmt_unicode(i),
            _ => self.bad_verb(verb, value),
        }
    }

    fn fmt_unicode(&mut self, i: i64) {
        let u = i as u64;
        let prec = if self.f.prec_present && self.f.prec > 4 {
            self.f.prec
        } else {
            4
        };
        let mut s = format!("U+{u:0prec$X}");
        if self.f.sharp {
            if let Some(c) = u32::try_from(u).ok().and_then(char::from_u32) {
                if is_print(c) {
                    s.push_str(" '");
                    s.push(c);
                    s.push('\'');
                }
            }
        }
        let zero = self.f.zero;
        self.f.zero = false;
        self.pad_str(&s);
        self.f.zero = zero;
    }

    fn fmt_integer(&mut self, value: i64, base: u32, verb: char, upper: bool) {
        self.fmt_magnitude(value < 0, value.unsigned_abs(), base, verb, upper);
    }

    /// Go's `fmtInteger` for a number of sign `negative` and size `u`.
    fn fmt_magnitude(&mut self, negative: bool, mut u: u64, base: u32, verb: char, upper: bool) {
        if self.f.prec_present && self.f.prec == 0 && u == 0 {
            let zero = self.f.zero;
            self.f.zero = false;
            self.write_padding(self.f.wid);
            self.f.zero = zero;
            return;
        }
        let mut prec = 0;
        if self.f.prec_present {
            prec = self.f.prec;
        } else if self.f.zero && self.f.wid_present {
            prec = self.f.wid;
            if negative || self.f.plus || self.f.space {
                prec = prec.saturating_sub(1);
            }
        }
        let digits: &[u8] = if upper {
            b"0123456789ABCDEF"
        } else {
            b"0123456789abcdef"
        };
        let mut buf: Vec<u8> = Vec::with_capacity(24 + prec);
        loop {
            buf.push(digits[(u % u64::from(base)) as usize]);
            u /= u64::from(base);
            if u == 0 {
                break;
            }
        }
        while buf.len() < prec {
            buf.push(b'0');
        }
        if self.f.sharp {
            match base {
                2 => buf.extend_from_slice(b"b0"),
                8 if buf.last() != Some(&b'0') => buf.push(b'0'),
                16 => {
                    buf.push(if upper { b'X' } else { b'x' });
                    buf.push(b'0');
                }
                _ => {}
            }
        }
        if verb == 'O' {
            buf.extend_from_slice(b"o0");
        }
        if negative {
            buf.push(b'-');
        } else if self.f.plus {
            buf.push(b'+');
        } else if self.f.space {
            buf.push(b' ');
        }
        buf.reverse();
        let s = String::from_utf8(buf).unwrap_or_default();
        let zero = self.f.zero;
        self.f.zero = false;
        self.pad_str(&s);
        self.f.zero = zero;
    }

    fn fmt_float(&mut self, v: f64, verb: char, default_prec: Option<usize>) {
        let prec = if self.f.prec_present {
            Some(self.f.prec)
        } else {
            default_prec
        };
        let mut num = String::from("+");
        let formatted = format_float(v, verb, prec);
        if let Some(rest) = formatted.strip_prefix('-') {
            num = format!("-{rest}");
        } else if let Some(rest) = formatted.strip_prefix('+') {
            num.push_str(rest);
        } else {
            num.push_str(&formatted);
        }
        if self.f.space && num.starts_with('+') && !self.f.plus {
            num.replace_range(0..1, " ");
        }
        let second = num.as_bytes().get(1).copied().unwrap_or(b'0');
        if second == b'I' || second == b'N' {
            let zero = self.f.zero;
            self.f.zero = false;
            if second == b'N' && !self.f.space && !self.f.plus {
                num.remove(0);
            }
            self.pad_str(&num);
            self.f.zero = zero;
            return;
        }
        if self.f.sharp && verb != 'b' {
            let mut digits: i64 = match verb {
                'v' | 'g' | 'G' | 'x' => prec.map_or(6, |p| p as i64),
                _ => 0,
            };
            let mut tail = String::new();
            let mut has_point = false;
            let mut saw_nonzero = false;
            let mut body = String::new();
            let chars: Vec<char> = num.chars().collect();
            body.push(chars[0]);
            let mut k = 1;
            while k < chars.len() {
                let c = chars[k];
                match c {
                    '.' => {
                        has_point = true;
                        body.push(c);
                    }
                    'p' | 'P' | 'e' | 'E'
                        if !(matches!(c, 'e' | 'E') && matches!(verb, 'x' | 'X')) =>
                    {
                        tail = chars[k..].iter().collect();
                        break;
                    }
                    _ => {
                        if c != '0' {
                            saw_nonzero = true;
                        }
                        if saw_nonzero {
                            digits -= 1;
                        }
                        body.push(c);
                    }
                }
                k += 1;
            }
            if !has_point {
                if body.len() == 2 && body.ends_with('0') {
                    digits -= 1;
                }
                body.push('.');
            }
            while digits > 0 {
                body.push('0');
                digits -= 1;
            }
            body.push_str(&tail);
            num = body;
        }
        if self.f.plus || !num.starts_with('+') {
            if self.f.zero && self.f.wid_present && self.f.wid > num.len() {
                let sign = num.remove(0);
                self.out.push(sign);
                self.write_padding(self.f.wid - num.len() - 1);
                self.out.push_str(&num);
                return;
            }
            self.pad_str(&num);
            return;
        }
        let unsigned = num[1..].to_string();
        self.pad_str(&unsigned);
    }
}

fn rune(i: i64) -> char {
    u32::try_from(i)
        .ok()
        .and_then(char::from_u32)
        .unwrap_or('\u{FFFD}')
}

/// A small stack buffer for formatting without allocating.
struct StackBuf {
    bytes: [u8; 64],
    len: usize,
}

impl std::fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let place = self.bytes.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        place.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// `%v` of a float (`strconv.FormatFloat(v, 'g', -1, 64)`) without allocating.
fn write_shortest_g(out: &mut String, v: f64) {
    if !v.is_finite() {
        out.push_str(&format_float(v, 'g', None));
        return;
    }
    let mut buf = StackBuf {
        bytes: [0; 64],
        len: 0,
    };
    if write!(buf, "{:e}", v.abs()).is_err() {
        out.push_str(&format_float(v, 'g', None));
        return;
    }
    let text = std::str::from_utf8(buf.bytes.get(..buf.len).unwrap_or(&[])).unwrap_or("0e0");
    let (mantissa, exp) = text.split_once('e').unwrap_or((text, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let mut digits = [0u8; 32];
    let mut nd = 0;
    for b in mantissa.bytes().filter(u8::is_ascii_digit) {
        if let Some(place) = digits.get_mut(nd) {
            *place = b;
            nd += 1;
        }
    }
    while nd > 1 && digits[nd - 1] == b'0' {
        nd -= 1;
    }
    let digits = &digits[..nd.max(1)];
    if v.is_sign_negative() {
        out.push('-');
    }
    if !(-4..6).contains(&exp) {
        out.push(char::from(digits[0]));
        if digits.len() > 1 {
            out.push('.');
            out.extend(digits[1..].iter().map(|&b| char::from(b)));
        }
        let _ = write!(
            out,
            "e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.unsigned_abs()
        );
        return;
    }
    let dp = exp + 1;
    if dp <= 0 {
        out.push_str("0.");
        for _ in 0..-dp {
            out.push('0');
        }
        out.extend(digits.iter().map(|&b| char::from(b)));
        return;
    }
    let dp = dp as usize;
    for i in 0..dp {
        out.push(char::from(digits.get(i).copied().unwrap_or(b'0')));
    }
    if digits.len() > dp {
        out.push('.');
        out.extend(digits[dp..].iter().map(|&b| char::from(b)));
    }
}

/// The most digits asked of Rust's float formatting, which panics on a
/// precision past 65,535 (Go's `printf` allows 1,000,000). A `f64` written
/// exactly has at most 1,074 digits after the point and 767 significant
/// ones: every digit past this many is a zero, added by hand.
const MAX_EXACT_DIGITS: usize = 1100;

/// `strconv.FormatFloat(v, verb, prec, 64)`; `None` is the shortest
/// representation that reads back exactly (precision -1).
pub(crate) fn format_float(v: f64, verb: char, prec: Option<usize>) -> String {
    if v.is_nan() {
        return "NaN".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    let neg = v.is_sign_negative();
    let a = v.abs();
    let sign = if neg { "-" } else { "" };
    match verb {
        'e' | 'E' => {
            let (digits, exp) = decimal_digits(a, prec.map(|p| p + 1));
            format!("{sign}{}", fmt_e(&digits, exp, prec, verb))
        }
        'f' | 'F' => match prec {
            Some(p) => {
                let mut text = format!("{sign}{a:.*}", p.min(MAX_EXACT_DIGITS));
                text.extend(std::iter::repeat_n('0', p.saturating_sub(MAX_EXACT_DIGITS)));
                text
            }
            None => {
                let (digits, exp) = decimal_digits(a, None);
                format!("{sign}{}", fmt_f(&digits, exp, None))
            }
        },
        'g' | 'G' => {
            let e_verb = if verb == 'g' { 'e' } else { 'E' };
            let p = prec.map(|p| p.max(1));
            let (digits, exp) = decimal_digits(a, p);
            let nd = digits.len() as i64;
            let dp = exp + 1;
            let shortest = prec.is_none();
            let mut eprec = p.map_or(nd, |p| p as i64);
            if eprec > nd && nd >= dp {
                eprec = nd;
            }
            if shortest {
                eprec = 6;
            }
            if exp < -4 || exp >= eprec {
                let mut q = p.map_or(nd, |p| p as i64);
                if q > nd {
                    q = nd;
                }
                return format!(
                    "{sign}{}",
                    fmt_e(&digits, exp, Some((q - 1).max(0) as usize), e_verb)
                );
            }
            let mut q = p.map_or(nd, |p| p as i64);
            if q > dp {
                q = nd;
            }
            format!(
                "{sign}{}",
                fmt_f(&digits, exp, Some((q - dp).max(0) as usize))
            )
        }
        'b' | 'x' | 'X' => {
            // Rare in prompts: fall back to %e-like output for these verbs.
            format!(
                "{sign}{}",
                fmt_e(
                    &decimal_digits(a, None).0,
                    decimal_digits(a, None).1,
                    None,
                    'e'
                )
            )
        }
        _ => format!("{v}"),
    }
}

/// The decimal digits of `a` (no leading zeros; "0" for zero) and the
/// exponent of the first digit, rounded to `sig` significant digits or
/// shortest when `None`.
fn decimal_digits(a: f64, sig: Option<usize>) -> (Vec<u8>, i64) {
    let text = match sig {
        Some(n) => format!("{:.*e}", n.min(MAX_EXACT_DIGITS).saturating_sub(1), a),
        None => format!("{a:e}"),
    };
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let mut digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    if a == 0.0 {
        return (vec![b'0'; digits.len().max(1)], 0);
    }
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    (digits, exp)
}

fn fmt_e(digits: &[u8], exp: i64, prec: Option<usize>, verb: char) -> String {
    let mut s = String::new();
    s.push(char::from(*digits.first().unwrap_or(&b'0')));
    let frac: Vec<u8> = match prec {
        Some(p) => (0..p)
            .map(|i| digits.get(i + 1).copied().unwrap_or(b'0'))
            .collect(),
        None => digits.get(1..).unwrap_or(&[]).to_vec(),
    };
    if !frac.is_empty() {
        s.push('.');
        s.extend(frac.iter().map(|&b| char::from(b)));
    }
    let exp = if digits.iter().all(|&d| d == b'0') {
        0
    } else {
        exp
    };
    s.push(verb);
    s.push(if exp < 0 { '-' } else { '+' });
    let e = exp.unsigned_abs();
    if e < 10 {
        s.push('0');
    }
    let _ = write!(s, "{e}");
    s
}

fn fmt_f(digits: &[u8], exp: i64, prec: Option<usize>) -> String {
    let dp = exp + 1;
    let mut s = String::new();
    if dp > 0 {
        for i in 0..dp as usize {
            s.push(char::from(digits.get(i).copied().unwrap_or(b'0')));
        }
    } else {
        s.push('0');
    }
    let frac_len = match prec {
        Some(p) => p,
        None => (digits.len() as i64 - dp).max(0) as usize,
    };
    if frac_len > 0 {
        s.push('.');
        for i in 0..frac_len {
            let idx = dp + i as i64;
            let d = if idx < 0 {
                b'0'
            } else {
                digits.get(idx as usize).copied().unwrap_or(b'0')
            };
            s.push(char::from(d));
        }
    }
    s
}

/// Go's `unicode.IsPrint`, approximated with the standard library.
pub(crate) fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(c,
        '\u{AD}' | '\u{600}'..='\u{605}' | '\u{61C}' | '\u{6DD}' | '\u{70F}'
        | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}'
        | '\u{E000}'..='\u{F8FF}' | '\u{FFFE}' | '\u{FFFF}')
}

/// `strconv.Quote` (or `QuoteToASCII` when `ascii`), with `quote` as the
/// delimiter (`"` for strings, `'` for runes).
pub(crate) fn quote(s: &str, quote: char, ascii: bool) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        if c == quote || c == '\\' {
            out.push('\\');
            out.push(c);
            continue;
        }
        if ascii {
            if c.is_ascii() && is_print(c) {
                out.push(c);
                continue;
            }
        } else if is_print(c) {
            out.push(c);
            continue;
        }
        match c {
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push(quote);
    out
}

fn can_backquote(s: &str) -> bool {
    s.chars()
        .all(|c| c != '`' && c != '\u{FEFF}' && (c == '\t' || !c.is_control()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printf(format: &str, args: &[Value<'_>]) -> String {
        let mut out = String::new();
        sprintf(&mut out, format, args);
        out
    }

    /// Found by the `go_template` fuzz target: a precision past 65,535
    /// (Go allows 1,000,000) panicked in Rust's float formatting.
    #[test]
    fn a_float_precision_past_rusts_limit_pads_with_zeros() {
        let args = [Value::Float(1.5)];
        assert_eq!(printf("%.100000g", &args), "1.5");
        let e = printf("%.100000e", &args);
        assert_eq!(e.len(), 100_006);
        assert!(
            e.starts_with("1.500") && e.ends_with("00e+00"),
            "{}",
            &e[..10]
        );
        assert_eq!(printf("%.70000f", &args).len(), 70_002);
        let third = printf("%.70000f", &[Value::Float(1.0 / 3.0)]);
        assert_eq!(third[..1100], format!("{:.1098}", 1.0f64 / 3.0));
        assert!(third[1100..].bytes().all(|b| b == b'0'));
    }

    #[test]
    fn integers_print_as_core_fmt_prints_them() {
        let mut values = vec![i64::MIN, i64::MIN + 1, i64::MAX, 0, -1];
        for digits in 0..19 {
            let p = 10i64.pow(digits);
            values.extend([p - 1, p, p + 1, -p + 1, -p, -p - 1, 7 * p + 3]);
        }
        for v in values {
            let mut out = String::from("x");
            write_int(&mut out, v);
            assert_eq!(out, format!("x{v}"));
        }
    }

    #[test]
    fn shortest_g_matches_format_float() {
        for v in [
            0.0,
            -0.0,
            1.0,
            3.5,
            1e6,
            999999.0,
            1e21,
            1e20,
            123456789.0,
            0.0001,
            0.00001,
            1.5e-7,
            -2.5,
            0.1,
            1.0 / 3.0,
            5e-324,
            1.7976931348623157e308,
            100000.0,
            12.5e3,
        ] {
            let mut out = String::new();
            write_shortest_g(&mut out, v);
            assert_eq!(out, format_float(v, 'g', None), "{v}");
        }
    }

    #[test]
    fn floats_like_strconv() {
        assert_eq!(format_float(1e6, 'g', None), "1e+06");
        assert_eq!(format_float(100000.0, 'g', None), "100000");
        assert_eq!(format_float(3.0, 'g', None), "3");
        assert_eq!(format_float(0.00001, 'g', None), "1e-05");
        assert_eq!(format_float(1234.5678, 'e', Some(6)), "1.234568e+03");
        assert_eq!(format_float(1234.5678, 'g', Some(3)), "1.23e+03");
        assert_eq!(format_float(1.23456, 'f', Some(1)), "1.2");
        assert_eq!(format_float(0.0, 'e', Some(2)), "0.00e+00");
        assert_eq!(format_float(-2.5, 'g', None), "-2.5");
        assert_eq!(format_float(123456789.0, 'g', None), "1.23456789e+08");
        assert_eq!(format_float(0.1, 'g', Some(3)), "0.1");
        assert_eq!(format_float(100.0, 'g', Some(3)), "100");
    }

    #[test]
    fn verbs_and_flags() {
        use Value::*;
        assert_eq!(
            printf(
                "%5.1f|%08.3f|%+08d|% d|%x",
                &[Float(1.23456), Float(-1.23456), Int(42), Int(42), Int(-255)]
            ),
            "  1.2|-001.235|+0000042| 42|-ff"
        );
        assert_eq!(
            printf("%d %s %d", &[Str("x"), Int(1)]),
            "%!d(string=x) %!s(int=1) %!d(MISSING)"
        );
        assert_eq!(
            printf("%[2]d %[1]d|%[3]d", &[Int(1), Int(2)]),
            "2 1|%!d(BADINDEX)"
        );
        assert_eq!(printf("%d", &[Int(1), Int(2)]), "1%!(EXTRA int=2)");
        assert_eq!(
            printf(
                "%*d|%-*d|%.*f",
                &[Int(5), Int(1), Int(5), Int(1), Int(2), Float(1.23456)]
            ),
            "    1|1    |1.23"
        );
        assert_eq!(
            printf(
                "%x %X %o %O %b %#o %#b %#x",
                &[
                    Int(255),
                    Int(255),
                    Int(8),
                    Int(8),
                    Int(5),
                    Int(8),
                    Int(5),
                    Int(255)
                ]
            ),
            "ff FF 10 0o10 101 010 0b101 0xff"
        );
        assert_eq!(
            printf(
                "%q %#q %+q %x % x %#x",
                &[
                    Str("é\n"),
                    Str("x"),
                    Str("é"),
                    Str("hi"),
                    Str("hi"),
                    Str("hi")
                ]
            ),
            "\"é\\n\" `x` \"\\u00e9\" 6869 68 69 0x6869"
        );
        assert_eq!(
            printf("%U %#U %c %q", &[Int(233), Int(233), Int(65), Int(65)]),
            "U+00E9 U+00E9 'é' A 'A'"
        );
        assert_eq!(
            printf("%05s|%-5s|%.2s", &[Str("ab"), Str("ab"), Str("abc")]),
            "000ab|ab   |ab"
        );
        assert_eq!(
            printf("%t %v %d", &[Bool(true), Null, Null]),
            "true <nil> %!d(<nil>)"
        );
        assert_eq!(printf("%!", &[Int(1)]), "%!!(int=1)");
        assert_eq!(
            printf("%#g %e %G", &[Float(1.0), Float(1234.5678), Float(1e21)]),
            "1.00000 1.234568e+03 1E+21"
        );
        assert_eq!(printf("100%%", &[]), "100%");
        assert_eq!(printf("%", &[]), "%!(NOVERB)");
    }
}
