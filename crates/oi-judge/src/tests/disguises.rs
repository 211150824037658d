//! The disguises of destructive commands the hard-deny list blocks, with their reasons.

/// (language, code, reason): blocked even with auto_run, whatever the allow rules say.
pub(super) const DISGUISES: &[(&str, &str, &str)] = &[
    (
        "shell",
        "for d in $(find / -maxdepth 1); do rm -rf \"$d\"; done",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "r''m -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"\rm -rf /"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#""rm" -rf /"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"'r'"m" -rf ~"#,
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "shell",
        "$(echo rm) -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "`echo rm` -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "X=rm; $X -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "a=r; b=m; $a$b -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "X=$(echo rm); $X -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"eval "rm -rf /""#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "eval rm -rf '~'",
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "shell",
        r#"sh -c "rm -rf /""#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "bash -c 'rm -rf ~'",
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "shell",
        r#"sh -c 'rm -rf "$1"' _ /"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "echo / | xargs rm -rf",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "echo / | xargs -I{} rm -rf {}",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"printf '/\n' | xargs rm -rf"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "$(printf 'r%s' m) -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"$'\x72\x6d' -rf /"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"$(echo -e '\x72\x6d') -rf /"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"x="-rf /"; rm $x"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "$RM -rf /",
        "it runs a command oi cannot read before it runs (`$RM`) with a recursive flag on the whole filesystem (`/`)",
    ),
    (
        "shell",
        r#""$(which rm)" -rf /"#,
        "it runs a command oi cannot read before it runs (`$(which rm)`) with a recursive flag on the whole filesystem (`/`)",
    ),
    (
        "shell",
        "ls $(rm -rf /)",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "echo 'rm -rf /' | sh",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "bash <<EOF\nrm -rf /\nEOF",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"rm -rf "$HOME"/../.."#,
        "it recursively deletes the whole filesystem (`rm -r /home/ada/../..`)",
    ),
    (
        "shell",
        "rm -rf /usr/..",
        "it recursively deletes the whole filesystem (`rm -r /usr/..`)",
    ),
    (
        "shell",
        "rm -rf /{,}",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "rm -rf ~root",
        "it recursively deletes a top-level system directory (`rm -r /root`)",
    ),
    (
        "shell",
        "rm -rf //",
        "it recursively deletes the whole filesystem (`rm -r //`)",
    ),
    (
        "shell",
        "rm -rf /./",
        "it recursively deletes the whole filesystem (`rm -r /./`)",
    ),
    (
        "shell",
        "rm -rf ${HOME}",
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "shell",
        r#"rm -rf "$HOME/"*"#,
        "it recursively deletes your home directory (`rm -r /home/ada/*`)",
    ),
    (
        "shell",
        "rm -rf ~/.*",
        "it recursively deletes your home directory (`rm -r /home/ada/.*`)",
    ),
    (
        "shell",
        "rm -rf /*",
        "it recursively deletes the whole filesystem (`rm -r /*`)",
    ),
    (
        "shell",
        "rm -rf /usr",
        "it recursively deletes a top-level system directory (`rm -r /usr`)",
    ),
    (
        "shell",
        "rm -rf /home/bob",
        "it recursively deletes a user's home directory (`rm -r /home/bob`)",
    ),
    (
        "shell",
        "rm -rf ~/projects/x/../..",
        "it recursively deletes your home directory (`rm -r /home/ada/projects/x/../..`)",
    ),
    (
        "shell",
        "rm -rf ..",
        "it recursively deletes a parent of the working directory (`rm -r ..`)",
    ),
    (
        "shell",
        "rm -rf /home/ada/projects",
        "it recursively deletes a parent of the working directory (`rm -r /home/ada/projects`)",
    ),
    (
        "shell",
        "cd / && rm -rf *",
        "it recursively deletes the whole filesystem (`rm -r *`)",
    ),
    (
        "shell",
        "cd build; rm -rf *",
        "it recursively deletes the working directory (`rm -r *`)",
    ),
    (
        "shell",
        r#"D=/; rm -rf "$D""#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"for d in /tmp /; do rm -rf "$d"; done"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "if true; then X=/; else X=build; fi; rm -rf $X",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"rm -rf "$UNSET"/"#,
        "it recursively deletes a path oi cannot know before the code runs, which may be the whole filesystem (`rm -r $UNSET/`)",
    ),
    (
        "shell",
        r#"rm -rf "${X:-/}""#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "rm -rf $(ls)",
        "it recursively deletes a path oi cannot know before the code runs, which may be the whole filesystem (`rm -r $(ls)`)",
    ),
    (
        "shell",
        "cat list | xargs rm -rf",
        "it recursively deletes a path oi cannot know before the code runs, which may be the whole filesystem (`rm -r <xargs input>`)",
    ),
    (
        "shell",
        r#"for f in *; do rm -rf "$f"; done"#,
        "it recursively deletes the working directory (`rm -r *`)",
    ),
    (
        "shell",
        "sudo rm -rf --no-preserve-root /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "env rm -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "nohup rm -rf / &",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "timeout 5 rm -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "command rm -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "exec rm -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "sudo -u root env X=1 nice -n 5 rm -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "busybox rm -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "doas rm -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "sh",
        "watch -n 1 rm -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "zsh",
        "su -c 'rm -rf /'",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "env -S 'rm -rf /'",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "bash",
        r#"perl -e 'system("rm -rf /")'"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"node -e "require('child_process').execSync('rm -rf ~')""#,
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "shell",
        "find / -delete",
        "it recursively deletes the whole filesystem (`find / … -delete`)",
    ),
    (
        "shell",
        "find ~ -exec rm -rf {} +",
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "shell",
        "find / -name '*' -delete",
        "it recursively deletes the whole filesystem (`find / … -delete`)",
    ),
    (
        "shell",
        "find . -type f -delete",
        "it recursively deletes the working directory (`find . … -delete`)",
    ),
    (
        "shell",
        "dd if=/dev/zero of=/dev/sda bs=1M",
        "it overwrites a disk device (`dd of=/dev/sda`)",
    ),
    (
        "shell",
        "cat /dev/zero > /dev/nvme0n1",
        "it writes onto a disk device (`>/dev/nvme0n1`)",
    ),
    (
        "shell",
        "> /dev/sda",
        "it writes onto a disk device (`>/dev/sda`)",
    ),
    (
        "shell",
        "echo x | tee /dev/sda",
        "it overwrites a disk device (`tee /dev/sda`)",
    ),
    (
        "shell",
        "shred -n1 /dev/sda",
        "it overwrites a disk device (`shred /dev/sda`)",
    ),
    (
        "shell",
        "mkfs.ext4 /dev/sda1",
        "it formats or repartitions a disk (`mkfs.ext4`)",
    ),
    (
        "shell",
        "wipefs -a /dev/sda",
        "it formats or repartitions a disk (`wipefs`)",
    ),
    (
        "shell",
        "chmod -R 000 /",
        "it recursively changes the owner or mode of the whole filesystem (`chmod -R … /`)",
    ),
    (
        "shell",
        "chown -R nobody /",
        "it recursively changes the owner or mode of the whole filesystem (`chown -R … /`)",
    ),
    (
        "shell",
        "chmod -R 755 ~",
        "it recursively changes the owner or mode of your home directory (`chmod -R … /home/ada`)",
    ),
    (
        "shell",
        "echo cm0gLXJmIC8= | base64 -d | sh",
        "it pipes decoded data into sh (an encoded payload oi cannot read)",
    ),
    (
        "shell",
        r#"eval "$(echo cm0gLXJmIC8= | base64 -d)""#,
        "it runs decoded code with eval (an encoded payload oi cannot read)",
    ),
    (
        "shell",
        "bash <(echo cm0gLXJmIC8= | base64 -d)",
        "it runs decoded code with bash (an encoded payload oi cannot read)",
    ),
    (
        "shell",
        "base64 --decode payload.txt | bash",
        "it pipes decoded data into bash (an encoded payload oi cannot read)",
    ),
    (
        "shell",
        r#"python3 -c "$(echo cHJpbnQoMSk= | base64 -d)""#,
        "it runs decoded code with python3 -c (an encoded payload oi cannot read)",
    ),
    (
        "shell",
        "echo 726d | xxd -r -p | sh",
        "it pipes decoded data into sh (an encoded payload oi cannot read)",
    ),
    (
        "shell",
        r#"bash <<< "$(base64 -d <<< cm0=)""#,
        "it pipes decoded data into bash (an encoded payload oi cannot read)",
    ),
    (
        "shell",
        ":(){ :|:& };:",
        "it is a fork bomb (the function `:` starts copies of itself in a pipe or in the background)",
    ),
    (
        "shell",
        ":(){:|:&};:",
        "it is a fork bomb (the function `:` starts copies of itself in a pipe or in the background)",
    ),
    (
        "shell",
        "bomb(){ bomb|bomb& }; bomb",
        "it is a fork bomb (the function `bomb` starts copies of itself in a pipe or in the background)",
    ),
    (
        "shell",
        "f() { f | f & } ; f",
        "it is a fork bomb (the function `f` starts copies of itself in a pipe or in the background)",
    ),
    (
        "python",
        "import shutil\nshutil.rmtree('/')",
        "it recursively deletes the whole filesystem (`shutil.rmtree('/')`)",
    ),
    (
        "python",
        "import shutil, os\nshutil.rmtree(os.path.expanduser('~'))",
        "it recursively deletes your home directory (`shutil.rmtree(os.path.expanduser('~'))` deletes `/home/ada`)",
    ),
    (
        "python",
        "import os\nos.system(\"rm -rf /\")",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "python",
        "import subprocess\nsubprocess.run([\"rm\",\"-rf\",\"/\"])",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "python",
        "import subprocess\nsubprocess.call(\"rm -rf ~\", shell=True)",
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "python",
        "import os\nos.popen(\"rm -rf ~\")",
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "python",
        "from shutil import rmtree as r\nfrom pathlib import Path\nr(Path.home())",
        "it recursively deletes your home directory (`r(Path.home())` deletes `/home/ada`)",
    ),
    (
        "python",
        "import shutil, os\nshutil.rmtree(os.environ['HOME'])",
        "it recursively deletes your home directory (`shutil.rmtree(os.environ['HOME'])` deletes `/home/ada`)",
    ),
    (
        "python",
        "import shutil\np = '/'\nshutil.rmtree(p)",
        "it recursively deletes the whole filesystem (`shutil.rmtree(p)` deletes `/`)",
    ),
    (
        "py",
        "shutil.rmtree(Path('~').expanduser())",
        "it recursively deletes your home directory (`shutil.rmtree(Path('~').expanduser())` deletes `/home/ada`)",
    ),
    (
        "python",
        r#"os.system(f"rm -rf {os.path.expanduser('~')}")"#,
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "python",
        "import os\nwhile True:\n    os.fork()",
        "it is a fork bomb (an endless loop that calls fork)",
    ),
    (
        "python",
        "while 1: os.fork()",
        "it is a fork bomb (an endless loop that calls fork)",
    ),
    (
        "python",
        "open('/dev/sda', 'wb').write(b'x')",
        "it overwrites a disk device (`open('/dev/sda', 'wb')`)",
    ),
    (
        "python",
        r#"exec("import shutil; shutil.rmtree('/')")"#,
        "it recursively deletes the whole filesystem (`shutil.rmtree('/')`)",
    ),
    (
        "python",
        r#"os.execvp("rm", ["rm", "-rf", "/"])"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "python",
        r#"subprocess.run("bash -c 'rm -rf ~'", shell=True)"#,
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "shell",
        "python3 <<'EOF'\nimport shutil; shutil.rmtree('/')\nEOF",
        "it recursively deletes the whole filesystem (`shutil.rmtree('/')`)",
    ),
    (
        "javascript",
        "require('child_process').execSync('rm -rf ~')",
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "ruby",
        r#"system("rm -rf /")"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    ("powershell", "format c:", "it formats a disk (`format c:`)"),
];
