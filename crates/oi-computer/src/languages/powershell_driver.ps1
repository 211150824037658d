# oi PowerShell driver: runs code blocks sent as JSON lines on stdin in the script scope (so
# variables and functions persist), and reports events on stdout framed by "\x1eOI<nonce>{json}\n".
$__oi_prefix = [string][char]0x1e + 'OI' + $env:OI_NONCE
Remove-Item Env:OI_NONCE -ErrorAction SilentlyContinue
Remove-Item Env:OI_DRIVER -ErrorAction SilentlyContinue
$ProgressPreference = 'SilentlyContinue'
$__oi_stdout = [Console]::Out
$__oi_stdin = [Console]::In
[Console]::SetIn([System.IO.StreamReader]::Null)
function __oi_emit([string]$json) {
    $__oi_stdout.Write($__oi_prefix + $json + "`n")
    $__oi_stdout.Flush()
}
while ($true) {
    $__oi_line = $__oi_stdin.ReadLine()
    if ($null -eq $__oi_line) { break }
    try { $__oi_cmd = $__oi_line | ConvertFrom-Json } catch { continue }
    $__oi_id = [long]$__oi_cmd.id
    __oi_emit ('{"ev":"start","id":' + $__oi_id + '}')
    try {
        $__oi_block = [ScriptBlock]::Create([string]$__oi_cmd.code)
        . $__oi_block 2>&1 | Out-String -Stream -Width 200 | ForEach-Object { $__oi_stdout.WriteLine($_); $__oi_stdout.Flush() }
    } catch {
        $__oi_stdout.WriteLine(($_ | Out-String).TrimEnd())
    }
    __oi_emit ('{"ev":"done","id":' + $__oi_id + '}')
}
