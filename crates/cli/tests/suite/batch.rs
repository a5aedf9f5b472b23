//! `lathe batch`: a task file run by the local pool, end to end against scripted mocks.

use super::batch_fixtures::{self, Kind};

#[tokio::test]
async fn the_fixture_repositories_fail_their_check_until_the_known_fix() {
    let fixture = batch_fixtures::twenty_tasks().await;
    assert_eq!(fixture.ids(Kind::Solvable).len(), 15);
    assert_eq!(fixture.ids(Kind::Unsolvable).len(), 3);
    assert_eq!(fixture.ids(Kind::Hanging).len(), 2);
    let task = &fixture.tasks[0];
    let fix = "diff --git a/answer.txt b/answer.txt\nnew file mode 100644\n--- /dev/null\n+++ b/answer.txt\n@@ -0,0 +1 @@\n+42\n";
    let wrong = fix.replace("+42", "+43");
    assert!(batch_fixtures::patch_passes(&task.repo, &task.base_sha, fix));
    assert!(!batch_fixtures::patch_passes(&task.repo, &task.base_sha, &wrong));
    assert!(!batch_fixtures::patch_passes(&task.repo, &task.base_sha, ""));
}
