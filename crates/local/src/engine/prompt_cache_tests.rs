#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, SystemTime};

use super::*;

const PARAMS: KvParams = KvParams { context_tokens: 8192, batch_tokens: 512 };

fn model(dir: &Path, bytes: &[u8]) -> PathBuf {
    let path = dir.join("model.gguf");
    fs::write(&path, bytes).unwrap();
    path
}

fn set_age(path: &Path, seconds_ago: u64) {
    let file = fs::File::options().append(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(seconds_ago)).unwrap();
}

#[test]
fn the_file_name_depends_on_the_prefix_the_model_file_and_the_context() {
    let tmp = tempfile::tempdir().unwrap();
    let path = model(tmp.path(), b"weights");
    let cache = PromptCache::new(tmp.path().join("cache"), &path, PARAMS).unwrap();
    let name = cache.file_for(&[1, 2, 3]);
    assert_eq!(name, cache.file_for(&[1, 2, 3]), "the same prefix names the same file");
    assert_eq!(name.parent(), Some(tmp.path().join("cache").as_path()));
    assert_eq!(name.extension().unwrap(), "kv");
    assert_eq!(name.file_stem().unwrap().len(), 64);
    assert_ne!(name, cache.file_for(&[1, 2, 4]));
    assert_ne!(name, cache.file_for(&[1, 2]));

    let again = PromptCache::new(tmp.path().join("cache"), &path, PARAMS).unwrap();
    assert_eq!(again.file_for(&[1, 2, 3]), name, "another process names it alike");
    let other_context =
        PromptCache::new(tmp.path().join("cache"), &path, KvParams { context_tokens: 4096, ..PARAMS })
            .unwrap();
    assert_ne!(other_context.file_for(&[1, 2, 3]), name);
    let other_batch =
        PromptCache::new(tmp.path().join("cache"), &path, KvParams { batch_tokens: 256, ..PARAMS }).unwrap();
    assert_ne!(other_batch.file_for(&[1, 2, 3]), name);

    // A replaced model file (another size, then the same size with another time) is another model.
    model(tmp.path(), b"weights, longer");
    let resized = PromptCache::new(tmp.path().join("cache"), &path, PARAMS).unwrap();
    assert_ne!(resized.file_for(&[1, 2, 3]), name);
    model(tmp.path(), b"weights");
    set_age(&path, 3600);
    let retimed = PromptCache::new(tmp.path().join("cache"), &path, PARAMS).unwrap();
    assert_ne!(retimed.file_for(&[1, 2, 3]), name);
}

#[test]
fn a_missing_model_file_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(PromptCache::new(tmp.path().to_path_buf(), &tmp.path().join("none.gguf"), PARAMS).is_err());
}

#[test]
fn eviction_keeps_the_most_recently_used_files_and_deletes_stale_temporaries() {
    let tmp = tempfile::tempdir().unwrap();
    let path = model(tmp.path(), b"weights");
    let mut cache = PromptCache::new(tmp.path().join("cache"), &path, PARAMS).unwrap();
    cache.max_files = 3;
    let files: Vec<PathBuf> = (0..5).map(|i| cache.file_for(&[i])).collect();
    let temp = cache.temp_file().unwrap();
    for (age, file) in files.iter().enumerate() {
        fs::write(file, b"state").unwrap();
        set_age(file, 100 * (age as u64 + 1)); // files[0] is the newest
    }
    // The oldest file was just loaded again: it counts as the most recent.
    PromptCache::touch(&files[4]);
    let stale = tmp.path().join("cache").join(".tmp-dead.part");
    fs::write(&stale, b"half").unwrap();
    set_age(&stale, 3600);
    let unrelated = tmp.path().join("cache").join("notes.txt");
    fs::write(&unrelated, b"not ours").unwrap();
    set_age(&unrelated, 9000);

    assert_eq!(cache.evict(), 3, "two old cache files and the stale temporary file");
    let kept: Vec<bool> = files.iter().map(|file| file.exists()).collect();
    assert_eq!(kept, [true, true, false, false, true]);
    assert!(!stale.exists());
    assert!(temp.path().exists(), "a save in progress is left alone");
    assert!(unrelated.exists(), "files that are not cache files are left alone");
    assert_eq!(cache.evict(), 0);
}

#[test]
fn eviction_of_a_missing_directory_deletes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let path = model(tmp.path(), b"weights");
    let cache = PromptCache::new(tmp.path().join("absent"), &path, PARAMS).unwrap();
    assert_eq!(cache.evict(), 0);
    assert!(!cache.dir().exists());
}

#[test]
fn the_prefix_ends_with_the_first_end_of_turn_token() {
    const END: i32 = 99;
    assert_eq!(prefix_len(&[1, 2, END, 3, END, 4], END), Some(3));
    assert_eq!(prefix_len(&[END, 1], END), Some(1));
    assert_eq!(prefix_len(&[1, 2, 3], END), None, "no end of turn");
    assert_eq!(prefix_len(&[1, 2, END], END), None, "nothing after the prefix");
    assert_eq!(prefix_len(&[], END), None);
}

#[test]
fn a_sealed_file_checks_and_any_damage_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state.kv");
    let data: Vec<u8> = (0..10_000u32).flat_map(|i| i.to_le_bytes()).collect();
    fs::write(&path, &data).unwrap();
    assert!(check(&path).is_err(), "an unsealed file");
    seal(&path).unwrap();
    assert_eq!(fs::metadata(&path).unwrap().len(), (data.len() + TRAILER_BYTES) as u64);
    assert_eq!(check(&path), Ok(()));
    let sealed = fs::read(&path).unwrap();

    fs::write(&path, &sealed[..sealed.len() / 2]).unwrap();
    assert!(check(&path).unwrap_err().contains("no trailer"));
    fs::write(&path, &sealed[..10]).unwrap();
    assert!(check(&path).unwrap_err().contains("shorter than the trailer"));
    let mut flipped = sealed.clone();
    flipped[100] ^= 1;
    fs::write(&path, &flipped).unwrap();
    assert!(check(&path).unwrap_err().contains("SHA-256"));
    // Data cut out of the middle, trailer kept.
    let mut shortened = sealed[..1000].to_vec();
    shortened.extend_from_slice(&sealed[sealed.len() - TRAILER_BYTES..]);
    fs::write(&path, &shortened).unwrap();
    assert!(check(&path).unwrap_err().contains("the trailer says"));
    fs::remove_file(&path).unwrap();
    assert!(check(&path).is_err(), "a missing file");
}
