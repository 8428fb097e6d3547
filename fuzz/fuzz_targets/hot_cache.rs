//! A hot-cache `HEAD` and one partition file: a damaged one is a miss, never a panic or a wrong
//! value. The input is `[u16 le length of HEAD][HEAD][partition]`; each is read as recorded and
//! resealed (its checksum made right).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(n) = data
        .get(..2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
    else {
        return;
    };
    let rest = &data[2..];
    let (head, part) = rest.split_at(n.min(rest.len()));
    // The partition's own key (after its magic and epoch), so the lookup finds its file.
    let key = part
        .get(16..20)
        .map(|l| u32::from_le_bytes(l.try_into().unwrap()) as usize)
        .and_then(|l| part.get(20..20usize.saturating_add(l)))
        .unwrap_or(b"g")
        .to_vec();
    for (h, p) in [
        (head.to_vec(), part.to_vec()),
        (
            journal::fuzz::reseal_hot(head),
            journal::fuzz::reseal_hot(part),
        ),
    ] {
        let _ = journal::fuzz::decode_hot(&h, &p, &key);
    }
});
