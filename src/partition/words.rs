//! The flat encoding of a part on the wire (one u64 word per value, f64 by its bits,
//! arrays with a length prefix): [`Words`] writes it, [`Reader`] reads it back and names
//! where a malformed message breaks. Used by `part.rs` and `pml.rs` (a module of its own so
//! that neither imports the other's helpers).

use crate::error::{Error, Result};

#[derive(Default)]
pub(super) struct Words(Vec<u64>);

impl Words {
    /// The words written so far.
    pub(super) fn into_inner(self) -> Vec<u64> {
        self.0
    }
    pub(super) fn put(&mut self, x: u64) {
        self.0.push(x);
    }
    /// A length-prefixed array.
    pub(super) fn put_iter(&mut self, it: impl IntoIterator<Item = u64>) {
        let at = self.0.len();
        self.0.push(0);
        self.0.extend(it);
        self.0[at] = (self.0.len() - at - 1) as u64;
    }
    pub(super) fn put_str(&mut self, s: &str) {
        self.put_iter(s.bytes().map(|b| b as u64));
    }
}

pub(super) struct Reader<'a> {
    w: &'a [u64],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the first word of `w`.
    pub(super) fn new(w: &'a [u64]) -> Self {
        Reader { w, at: 0 }
    }
    /// The message's length in words (a bound for the capacity of what it can hold).
    pub(super) fn words(&self) -> usize {
        self.w.len()
    }
    pub(super) fn bad(&self, why: &str) -> Error {
        Error::Comm {
            what: "receiving a part".into(),
            msg: format!("malformed message at word {}: {why}", self.at),
        }
    }
    pub(super) fn get(&mut self) -> Result<u64> {
        let x = *self.w.get(self.at).ok_or_else(|| self.bad("truncated"))?;
        self.at += 1;
        Ok(x)
    }
    pub(super) fn get_vec(&mut self) -> Result<&'a [u64]> {
        let n = self.get()? as usize;
        if n > self.w.len() - self.at {
            return Err(self.bad("array longer than the message"));
        }
        let s = &self.w[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    pub(super) fn get_str(&mut self) -> Result<String> {
        let b: Vec<u8> = self.get_vec()?.iter().map(|&x| x as u8).collect();
        String::from_utf8(b).map_err(|_| self.bad("mesh name is not UTF-8"))
    }
}
