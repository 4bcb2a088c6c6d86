//! One line per distinct text with the names it holds for: the lists of notes, doubts and
//! verdicts that every rendering prints once for all the disks and phases they apply to.

/// `pairs` grouped by key: each distinct key once, at its first place, with its values in the
/// order they came.
pub fn grouped<K: PartialEq, V>(pairs: impl IntoIterator<Item = (K, V)>) -> Vec<(K, Vec<V>)> {
    let mut out: Vec<(K, Vec<V>)> = Vec::new();
    for (k, v) in pairs {
        match out.iter_mut().find(|(x, _)| *x == k) {
            Some((_, vs)) => vs.push(v),
            None => out.push((k, vec![v])),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::grouped;

    #[test]
    fn keys_keep_their_first_place_and_values_their_order() {
        let g = grouped([("b", 1), ("a", 2), ("b", 3), ("c", 4), ("a", 5)]);
        assert_eq!(
            g,
            vec![("b", vec![1, 3]), ("a", vec![2, 5]), ("c", vec![4])]
        );
        assert!(grouped(Vec::<(u8, u8)>::new()).is_empty());
    }
}
