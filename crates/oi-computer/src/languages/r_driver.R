# oi R driver: runs code blocks sent as "<id> <hex of the UTF-8 code>" lines on stdin in the
# global environment, and reports events on stdout framed by "\036OI<nonce>{json}\n".
local({
  prefix <- paste0("\036OI", Sys.getenv("OI_NONCE"))
  Sys.unsetenv(c("OI_NONCE", "OI_DRIVER"))
  plots <- file.path(tempdir(), "oi-plots")
  dir.create(plots, showWarnings = FALSE)
  # Plots go to PNG files that are reported after each run, never to Rplots.pdf in the cwd.
  options(device = function(...) grDevices::png(file.path(plots, "plot-%03d.png"), width = 800, height = 600))

  emit <- function(json) {
    cat(prefix, json, "\n", sep = "")
    flush(stdout())
  }
  unhex <- function(h) {
    n <- nchar(h)
    if (n < 2) return("")
    bytes <- as.raw(strtoi(substring(h, seq(1, n - 1, 2), seq(2, n, 2)), 16L))
    text <- rawToChar(bytes)
    Encoding(text) <- "UTF-8"
    text
  }
  b64 <- function(bytes) {
    if (length(bytes) == 0) return("")
    alphabet <- strsplit("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", "")[[1]]
    pad <- (3 - length(bytes) %% 3) %% 3
    v <- matrix(as.integer(c(bytes, as.raw(rep(0, pad)))), nrow = 3)
    w <- v[1, ] * 65536 + v[2, ] * 256 + v[3, ]
    out <- alphabet[as.vector(rbind(w %/% 262144, (w %/% 4096) %% 64, (w %/% 64) %% 64, w %% 64)) + 1]
    if (pad > 0) out[(length(out) - pad + 1):length(out)] <- "="
    paste(out, collapse = "")
  }
  # Each plot goes to oi inline, base64 on the event pipe: oi opens no file the code could swap.
  show_plots <- function() {
    while (grDevices::dev.cur() > 1) grDevices::dev.off()
    for (f in sort(list.files(plots, full.names = TRUE))) {
      data <- b64(readBin(f, "raw", n = file.info(f)$size))
      emit(paste0('{"ev":"rich","kind":"image","format":"base64.png","data":"', data, '"}'))
    }
  }
  clear_plots <- function() unlink(list.files(plots, full.names = TRUE))
  say_error <- function(e) {
    call <- conditionCall(e)
    call <- if (is.null(call)) "" else paste(deparse(call, nlines = 1), collapse = "")
    where <- if (call == "" || startsWith(call, "eval(exprs[[i]]")) "" else paste0(" in ", call)
    cat(paste0("Error", where, ": ", conditionMessage(e), "\n"), file = stderr())
  }
  run <- function(code, file) {
    exprs <- tryCatch(parse(text = code, keep.source = TRUE, srcfile = file),
                      error = function(e) { say_error(e); NULL })
    if (is.null(exprs)) return(invisible())
    refs <- attr(exprs, "srcref")
    for (i in seq_along(exprs)) {
      if (!is.null(refs)) emit(paste0('{"ev":"line","n":', refs[[i]][1], "}"))
      result <- withVisible(eval(exprs[[i]], envir = globalenv()))
      if (result$visible) print(result$value)
    }
  }
  con <- file("stdin", open = "r")
  repeat {
    line <- tryCatch(readLines(con, n = 1, warn = FALSE), interrupt = function(e) NA)
    if (length(line) == 0) break
    if (is.na(line)) next
    parts <- strsplit(line, " ", fixed = TRUE)[[1]]
    id <- suppressWarnings(as.numeric(parts[1]))
    if (is.na(id)) next
    code <- if (length(parts) > 1) unhex(parts[2]) else ""
    emit(paste0('{"ev":"start","id":', format(id, scientific = FALSE), "}"))
    clear_plots()
    tryCatch(
      withCallingHandlers(
        run(code, srcfilecopy(paste0("<cell ", id, ">"), code)),
        warning = function(w) {
          cat(paste0("Warning message:\n", conditionMessage(w), "\n"), file = stderr())
          invokeRestart("muffleWarning")
        }
      ),
      error = say_error,
      interrupt = function(e) cat("Interrupted\n", file = stderr())
    )
    tryCatch(show_plots(), error = say_error, interrupt = function(e) NULL)
    repeat {
      done <- tryCatch({ emit(paste0('{"ev":"done","id":', format(id, scientific = FALSE), "}")); TRUE },
                       interrupt = function(e) FALSE)
      if (done) break
    }
  }
})
quit(save = "no")
