//! Checks a model file before llama.cpp sees it: GGUF magic, version, and architecture.
//!
//! llama.cpp handles a bad file by logging and returning null at best, so Lathe reads the header
//! itself and reports what is wrong in words. Layout (GGUF spec, `ggml/docs/gguf.md`): magic
//! `GGUF`, `u32` version, `u64` tensor count, `u64` metadata count, then metadata entries
//! (`u64`-length string key, `u32` type, value), little-endian. Scalar string and integer values are
//! kept; arrays (the vocabulary) are skipped.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

/// Architectures the local provider can prompt correctly (Qwen2.5's ChatML and tool format).
pub const SUPPORTED_ARCHITECTURES: &[&str] = &["qwen2"];

/// A scalar metadata value.
#[derive(Debug, Clone, PartialEq)]
pub enum MetaValue {
    /// Any integer type, widened.
    Int(i128),
    /// `f32` or `f64`.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A UTF-8 string (lossily decoded).
    Str(String),
}

/// What the header says.
#[derive(Debug, Clone, PartialEq)]
pub struct GgufHeader {
    /// Format version (2 or 3).
    pub version: u32,
    /// Number of tensors.
    pub tensor_count: u64,
    /// Scalar metadata, by key (arrays are skipped).
    pub metadata: BTreeMap<String, MetaValue>,
}

impl GgufHeader {
    /// `general.architecture`, if present.
    pub fn architecture(&self) -> Option<&str> {
        match self.metadata.get("general.architecture") {
            Some(MetaValue::Str(arch)) => Some(arch),
            _ => None,
        }
    }

    /// A string metadata value.
    pub fn string(&self, key: &str) -> Option<&str> {
        match self.metadata.get(key) {
            Some(MetaValue::Str(value)) => Some(value),
            _ => None,
        }
    }

    /// An integer metadata value.
    pub fn int(&self, key: &str) -> Option<i128> {
        match self.metadata.get(key) {
            Some(MetaValue::Int(value)) => Some(*value),
            _ => None,
        }
    }
}

/// Why a model file was rejected.
#[derive(Debug, thiserror::Error)]
pub enum GgufError {
    /// The file does not exist.
    #[error("model file {} not found; run `lathe model fetch 0.5b` or set a model path", path.display())]
    Missing {
        /// The path tried.
        path: PathBuf,
    },
    /// It could not be read.
    #[error("cannot read model file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// Not a GGUF file (wrong magic) or a truncated / malformed header.
    #[error("{} is not a valid GGUF model file: {detail}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// A GGUF whose architecture this provider cannot prompt.
    #[error(
        "{} is a `{architecture}` model; the local provider supports Qwen2.5 GGUF models (architecture {})",
        path.display(), SUPPORTED_ARCHITECTURES.join(", ")
    )]
    UnsupportedArchitecture {
        /// The file.
        path: PathBuf,
        /// Its `general.architecture`.
        architecture: String,
    },
}

/// Reads the header of `path` and checks that its architecture is supported.
///
/// # Errors
/// [`GgufError`]: missing, unreadable, not GGUF / malformed, unsupported architecture.
pub fn validate_model_file(path: &Path) -> Result<GgufHeader, GgufError> {
    let header = read_header(path)?;
    match header.architecture() {
        Some(arch) if SUPPORTED_ARCHITECTURES.contains(&arch) => Ok(header),
        Some(arch) => Err(GgufError::UnsupportedArchitecture {
            path: path.to_path_buf(),
            architecture: arch.to_string(),
        }),
        None => Err(GgufError::Corrupt {
            path: path.to_path_buf(),
            detail: "no general.architecture metadata".into(),
        }),
    }
}

/// Reads the header and scalar metadata of a GGUF file.
///
/// # Errors
/// As [`validate_model_file`], except the architecture check.
pub fn read_header(path: &Path) -> Result<GgufHeader, GgufError> {
    let file = File::open(path).map_err(|source| match source.kind() {
        io::ErrorKind::NotFound => GgufError::Missing { path: path.to_path_buf() },
        _ => GgufError::Io { path: path.to_path_buf(), source },
    })?;
    let len = file.metadata().map_err(|source| GgufError::Io { path: path.to_path_buf(), source })?.len();
    let mut reader = Reader { inner: BufReader::with_capacity(1 << 16, file), file_len: len };
    reader.header().map_err(|detail| GgufError::Corrupt { path: path.to_path_buf(), detail })
}

struct Reader<R: Read> {
    inner: R,
    file_len: u64,
}

impl<R: Read> Reader<R> {
    fn header(&mut self) -> Result<GgufHeader, String> {
        let mut magic = [0u8; 4];
        self.bytes(&mut magic)?;
        if &magic != b"GGUF" {
            return Err(format!("bad magic {magic:02x?} (expected \"GGUF\")"));
        }
        let version = self.u32()?;
        if !(2..=3).contains(&version) {
            return Err(format!("unsupported GGUF version {version} (expected 2 or 3)"));
        }
        let tensor_count = self.u64()?;
        let kv_count = self.u64()?;
        if kv_count > 1_000_000 {
            return Err(format!("implausible metadata count {kv_count}"));
        }
        let mut metadata = BTreeMap::new();
        for _ in 0..kv_count {
            let key = self.string()?;
            let kind = self.u32()?;
            if let Some(value) = self.value(kind, 0)? {
                metadata.insert(key, value);
            }
        }
        Ok(GgufHeader { version, tensor_count, metadata })
    }

    /// Reads a value of type `kind`; arrays are skipped (`None`).
    fn value(&mut self, kind: u32, depth: u32) -> Result<Option<MetaValue>, String> {
        Ok(Some(match kind {
            0 => MetaValue::Int(self.fixed::<1>()?[0].into()),
            1 => MetaValue::Int(i8::from_le_bytes(self.fixed::<1>()?).into()),
            2 => MetaValue::Int(u16::from_le_bytes(self.fixed::<2>()?).into()),
            3 => MetaValue::Int(i16::from_le_bytes(self.fixed::<2>()?).into()),
            4 => MetaValue::Int(self.u32()?.into()),
            5 => MetaValue::Int(i32::from_le_bytes(self.fixed::<4>()?).into()),
            6 => MetaValue::Float(f32::from_le_bytes(self.fixed::<4>()?).into()),
            7 => MetaValue::Bool(self.fixed::<1>()?[0] != 0),
            8 => MetaValue::Str(self.string()?),
            9 => {
                if depth > 4 {
                    return Err("arrays nested too deeply".into());
                }
                let item_kind = self.u32()?;
                let count = self.u64()?;
                if count > self.file_len {
                    return Err(format!("array of {count} items is longer than the file"));
                }
                for _ in 0..count {
                    self.value(item_kind, depth + 1)?;
                }
                return Ok(None);
            }
            10 => MetaValue::Int(self.u64()?.into()),
            11 => MetaValue::Int(i64::from_le_bytes(self.fixed::<8>()?).into()),
            12 => MetaValue::Float(f64::from_le_bytes(self.fixed::<8>()?)),
            other => return Err(format!("unknown metadata type {other}")),
        }))
    }

    fn string(&mut self) -> Result<String, String> {
        let len = self.u64()?;
        if len > self.file_len || len > (64 << 20) {
            return Err(format!("string of {len} bytes is longer than the file"));
        }
        let mut buffer = vec![0u8; len as usize];
        self.bytes(&mut buffer)?;
        Ok(String::from_utf8_lossy(&buffer).into_owned())
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.fixed::<4>()?))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.fixed::<8>()?))
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut buffer = [0u8; N];
        self.bytes(&mut buffer)?;
        Ok(buffer)
    }

    fn bytes(&mut self, buffer: &mut [u8]) -> Result<(), String> {
        self.inner.read_exact(buffer).map_err(|err| match err.kind() {
            io::ErrorKind::UnexpectedEof => "the header is truncated".to_string(),
            _ => err.to_string(),
        })
    }
}

/// Test helper: the bytes of a minimal GGUF header with the given string metadata.
#[doc(hidden)]
pub fn synthetic_header(version: u32, metadata: &[(&str, &str)]) -> Vec<u8> {
    let mut out = b"GGUF".to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&(metadata.len() as u64).to_le_bytes());
    for (key, value) in metadata {
        out.extend_from_slice(&(key.len() as u64).to_le_bytes());
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(&8u32.to_le_bytes());
        out.extend_from_slice(&(value.len() as u64).to_le_bytes());
        out.extend_from_slice(value.as_bytes());
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn write(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.gguf");
        std::fs::write(&path, bytes).unwrap();
        (dir, path)
    }

    #[test]
    fn accepts_a_qwen2_header() {
        let (_dir, path) =
            write(&synthetic_header(3, &[("general.architecture", "qwen2"), ("general.name", "q")]));
        let header = validate_model_file(&path).unwrap();
        assert_eq!(header.architecture(), Some("qwen2"));
        assert_eq!(header.string("general.name"), Some("q"));
    }

    #[test]
    fn rejects_missing_corrupt_truncated_and_foreign_files() {
        let err = validate_model_file(Path::new("/nonexistent/model.gguf")).unwrap_err();
        assert!(
            matches!(err, GgufError::Missing { .. }) && err.to_string().contains("lathe model fetch"),
            "{err}"
        );

        let (_d1, path) = write(b"PK\x03\x04 definitely a zip");
        let err = validate_model_file(&path).unwrap_err();
        assert!(err.to_string().contains("not a valid GGUF model file: bad magic"), "{err}");

        let mut bytes = synthetic_header(3, &[("general.architecture", "qwen2")]);
        bytes.truncate(bytes.len() - 2);
        let (_d2, path) = write(&bytes);
        assert!(validate_model_file(&path).unwrap_err().to_string().contains("truncated"));

        let (_d3, path) = write(&synthetic_header(3, &[("general.architecture", "llama")]));
        let err = validate_model_file(&path).unwrap_err();
        assert!(matches!(err, GgufError::UnsupportedArchitecture { .. }), "{err}");
        assert!(err.to_string().contains("is a `llama` model"), "{err}");

        let (_d4, path) = write(&synthetic_header(1, &[("general.architecture", "qwen2")]));
        assert!(validate_model_file(&path).unwrap_err().to_string().contains("version 1"));
    }
}
