/// The version of WatchLink this source is: what `phoned`, `watchd` and `linkctl` print for
/// `--version` and `status` reports, and the tag of the release it belongs to.
///
/// The one place the version is written. Between releases it names the last release
/// (CHANGELOG.md's newest version); `scripts/check-version.sh` fails when the README, the
/// changelog, the documentation or a built program says otherwise, and `scripts/version.sh`
/// prints it for the scripts (docs/releasing.md).
public enum WatchLinkVersion {
    /// `MAJOR.MINOR.PATCH`, as the release's git tag is named.
    public static let current = "0.1.0"
}
