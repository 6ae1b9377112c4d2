//! "Did you mean ...?" suggestions for misspelt operator and attribute names.
//!
//! Distance is the optimal-string-alignment edit distance (insertions,
//! deletions, substitutions and swaps of adjacent characters each cost 1). A
//! candidate is accepted when it is within a third of the name's length (at
//! least 1); an exact match after a namespace (`relu` for `nn.relu`) or a
//! case-insensitive match always qualifies.

/// The edit distance between `a` and `b` (adjacent swaps count as one edit).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // rows[i][j] = distance between a[..i] and b[..j]; keep three rows.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before[j - 2] + 1);
            }
            current[j] = best;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The candidate closest to `name`, if any is close enough. Ties go to the
/// earliest candidate. `name` itself (an exact match) is never suggested.
pub fn did_you_mean<'a, I>(name: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let limit = (name.chars().count() / 3).max(1);
    let lower = name.to_lowercase();
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        if candidate == name {
            continue;
        }
        // Forgotten namespace (`conv2d` for `nn.conv2d`) or wrong case: as
        // good as a one-character slip.
        let score =
            if candidate.rsplit('.').next() == Some(name) || candidate.to_lowercase() == lower {
                1
            } else {
                let distance = edit_distance(name, candidate);
                if distance > limit {
                    continue;
                }
                distance
            };
        let better = match best {
            None => true,
            Some((best_score, _)) => score < best_score,
        };
        if better {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("nn.conv2", "nn.conv2d"), 1);
        assert_eq!(edit_distance("strdies", "strides"), 1);
        assert_eq!(edit_distance("channes", "channels"), 1);
    }

    #[test]
    fn suggestions() {
        let names = ["nn.conv2d", "nn.conv3d", "nn.relu", "add"];
        assert_eq!(did_you_mean("nn.conv2", names), Some("nn.conv2d"));
        assert_eq!(did_you_mean("relu", names), Some("nn.relu"));
        assert_eq!(did_you_mean("ADD", names), Some("add"));
        assert_eq!(did_you_mean("add", names), None);
        assert_eq!(did_you_mean("multiply", names), None);
        assert_eq!(did_you_mean("x", ["y"]), Some("y"));
    }
}
