# English messages of Gradient Accumulation Lab. Every string a learner reads lives here; the
# other languages mirror these ids (a test fails when one is missing).

## Site shell
app-title = Gradient Accumulation Lab
nav-main = Main
nav-lab = Lab
nav-quiz = Quiz
nav-verify = Verify a certificate
nav-language = Language
notice-unknown-page = Unknown page "{ $value }"; showing the Lab.
notice-unknown-scenario = Unknown scenario "{ $value }"; showing the default one.
notice-bad-parameter = "{ $value }" is not a valid value for { $parameter }; using the default.
notice-bad-combination = These settings cannot be combined; using the defaults.
notice-duplicate-parameter = { $parameter } is given { $count } times in the link; using the first value, "{ $value }".
notice-embed-overrides-view = This embed shows the { $embed }; the link's view "{ $view }" was ignored.
notice-preset-fixes = The { $scenario } scenario fixes { $parameters }; the link's values were ignored. Choose the sandbox to change them.
quiz-unknown-question = The quiz has no question "{ $value }"; it opens where you left it.
quiz-load-failed = The quiz could not be loaded: { $reason }

## Scenarios
scenario-select-label = Experiment
scenarios-nav = Scenarios
scenario-scaling-title = Full batch vs accumulated vs unscaled (SGD)
scenario-scaling-explanation = Three runs start from the same weights and see the same 256 examples at every step. The first takes them as one batch. The second splits them into 4 micro-batches of 64, scales each micro-batch's loss by 1/4 and adds up the gradients before one optimizer step. The third adds up the gradients without the 1/4, so its gradient is 4 times too large.
scenario-scaling-notice = Notice: the full-batch and the 1/N curves lie on top of each other; the unscaled run trains as if its learning rate were 4 times larger and oscillates.
scenario-scaling_adam-title = The same with Adam
scenario-scaling_adam-explanation = The same three runs with Adam. Adam divides each step by a running estimate of the gradient's own size, so multiplying every gradient by 4 also multiplies that estimate by 4 and the two cancel; only the tiny epsilon in the denominator notices the difference.
scenario-scaling_adam-notice = Notice: with Adam the unscaled run stays close to the other two, while with SGD it did not.
scenario-norms-title = BatchNorm vs LayerNorm vs GroupNorm under accumulation
scenario-norms-explanation = BatchNorm normalizes with the mean and variance of the examples in the batch it sees. With accumulation it sees one micro-batch at a time, so its statistics (and therefore its gradient) differ from the full batch's. LayerNorm and GroupNorm normalize each example on its own, so accumulation gives the full-batch gradient.
scenario-norms-notice = Notice: BatchNorm's gradient error is far above LayerNorm's and GroupNorm's, which are 0 (both engines add a micro-batch's rows in the full batch's order; at most float rounding, about 1e-7, where a GPU's compiler sums in another order); its running statistics are updated once per micro-batch, 4 times per optimizer step.
scenario-variable_length-title = Variable-length sequences
scenario-variable_length-explanation = Each example is a sequence whose tokens each have a loss, and sequences differ in length. Averaging per micro-batch and then averaging those means weighs a token in a short micro-batch more than one in a long micro-batch. Dividing the summed loss by the total number of tokens in the whole batch gives every token the same weight, as the full batch does.
scenario-variable_length-notice = Notice: "mean of means" has a clear gradient error; "/ total tokens" matches the full batch.
scenario-pitfalls-title = Pitfalls: zero_grad, clipping, scheduler
scenario-pitfalls-explanation = Four mistakes real training loops make, each against the correct loop: forgetting zero_grad (gradients pile up across steps), calling it every micro-batch (only the last micro-batch's gradient survives), clipping each micro-batch instead of the summed gradient, and stepping the learning-rate schedule per micro-batch instead of per optimizer step.
scenario-pitfalls-notice = Notice: clipping shortens the correct run's gradient but never turns it: its gradient error is 1 minus its clipping factor and its cosine stays exactly 1. Clip every micro-batch clips the partial sums as they grow, so early micro-batches are shrunk more than late ones: its clipping factor differs from the correct run's and its gradient turns (cosine below 1). zero_grad forgotten keeps every old gradient in the buffer: without clipping its gradient norm grows step after step and its loss jumps; with clipping, the buffer is rescaled in place each step, so the stale sum acts like momentum with a fixed step length, which happens to suit this easy problem but follows old gradients rather than the current one (cosine well below 1). zero_grad every micro-batch keeps only the last micro-batch. The scheduler stepped per micro-batch warms up and decays 4 times too fast (learning-rate chart).
scenario-memory-title = Activation memory
scenario-memory-explanation = Accumulation trades time for memory: the forward and backward pass only ever hold the activations of one micro-batch. The bars show the activation memory of each run's largest micro-batch against the full batch.
scenario-memory-notice = Notice: the training curves are the same for all three runs, while the activation memory falls with N.
scenario-sandbox-title = Sandbox
scenario-sandbox-explanation = Choose the data, the network, the optimizer, B and N yourself. Three runs train side by side: the full batch, N accumulated micro-batches with the loss scaled by 1/N, and the same without the scaling.
scenario-sandbox-notice = Notice: loss / N matches the full batch when the micro-batches hold equal numbers of items and no BatchNorm normalizes them separately; the unscaled gradient is N times too large.
scenario-sandbox-notice-one = Notice: with N = 1 there is nothing to accumulate: all three runs take the whole batch at once and are the full batch.
scenario-sandbox-notice-matches = Notice: with these settings the loss / { $n } run must match the full batch (equal micro-batches, no BatchNorm), and the unscaled run's gradient is { $n } times too large.
scenario-sandbox-notice-batch-norm = Notice: with BatchNorm the loss / { $n } run cannot match the full batch: each micro-batch is normalized with its own mean and variance.
scenario-sandbox-notice-variable-items = Notice: with variable-length sequences the micro-batches hold different numbers of tokens, so loss / { $n } is a mean of means and misses the full batch; dividing by the total token count would match (see the variable-length scenario).

## Runs
run-full-batch = full batch
run-accumulate-scaled = accumulate { $n }, loss / { $n }
run-accumulate-unscaled = accumulate { $n }, unscaled

## Controls
controls-title = Settings
controls-preset-note = This preset fixes its settings. Seed and steps per frame apply; to change the rest, copy it into the sandbox.
controls-copy-to-sandbox = Edit these settings in the sandbox
control-scenario-label = Scenario
control-dataset-label = Dataset
control-hidden-label = Hidden widths
control-hidden-hint = widths separated by "-", for example 64-64
control-activation-label = Activation
control-norm-label = Normalization
control-optimizer-label = Optimizer
control-lr-label = Learning rate
control-batch-label = Batch size B
control-n-label = Micro-batches N
control-seed-label = Seed
control-spf-label = Steps per frame (at most)
control-error-scenario = there is no scenario "{ $value }"
control-error-hidden-count = use 1 to { $max } hidden layers
control-error-hidden-width = each width must be 1 to { $max }; { $width } is not
control-error-hidden-format = write whole numbers separated by "-", for example 64-64
control-error-group-width = GroupNorm uses 4 groups: every width must be a multiple of 4
control-error-learning-rate = choose a learning rate between { $low } and { $high }
control-error-batch = choose a batch size B between { $low } and { $high }
control-error-n-max = N can be at most { $max } micro-batches
control-error-n-zero = N must be at least 1
control-error-n-too-large = N = { $n } is larger than B = { $batch }: a micro-batch would be empty
control-error-not-divisible = B = { $batch } is not divisible by N = { $n }: micro-batches would differ in size
control-error-batchnorm-micro = BatchNorm needs at least 2 examples per micro-batch
control-error-steps-per-frame = choose { $low } to { $high } steps per frame
control-error-number = enter a number
controls-invalid = Fix the settings marked in red under Settings to start a run.
dataset-spiral = spiral
dataset-two_moons = two moons
dataset-circles = circles
dataset-xor_blobs = XOR blobs
dataset-variable_length_sequences = variable-length sequences
activation-relu = ReLU
activation-tanh = tanh
activation-gelu = GELU
norm-none = none
norm-batch = BatchNorm
norm-layer = LayerNorm
norm-group = GroupNorm
optimizer-sgd = SGD
optimizer-momentum = SGD with momentum
optimizer-adam = Adam
optimizer-adamw = AdamW

## Transport
transport-label = Training
button-play = Play
button-pause = Pause
button-step = Single step
button-reset = Reset
status-idle = Ready. Press play to train.
status-running = Training…
status-paused = Paused at step { $step }.
status-pausing = Pausing: finishing the step that had begun…
status-finished = Finished { $step } steps.
status-preparing = Preparing the engine…
status-error = Training stopped: { $reason }
status-step-limit = Reached the limit of { $step } steps; press reset to start again.
status-all-diverged = Every run diverged (by step { $step }); change the settings and press reset.

## Engine
engine-adapter-hidden = adapter name not disclosed by the browser
engine-label = Engine
engine-webgpu = WebGPU: { $adapter }
engine-cpu = CPU (WebAssembly)
engine-cpu-fallback = CPU fallback: { $reason }
engine-fallback-notice = WebGPU is not available here ({ $reason }), so the lab trains on the CPU engine; the numbers are the same, only slower.
engine-lost-notice = WebGPU stopped ({ $reason }); the lab replayed the run on the CPU engine and continues there with the same numbers.
engine-no-webgpu = this browser has no WebGPU
engine-no-adapter = the browser offers no WebGPU adapter
engine-gpu-error = WebGPU failed: { $reason }
engine-chosen-cpu = CPU engine: { $times }x faster than WebGPU on this machine (measured on this experiment)
engine-chosen-gpu = { $times }x as fast as the CPU engine on this machine
engine-forced-cpu = the CPU engine was chosen in the URL

## Results
results-title = After step { $step }
results-run = run
results-loss = training loss
results-grad-error = gradient error vs full batch
results-cosine = cosine with full batch
results-grad-norm = gradient norm
results-accuracy = test accuracy
results-none = not measured
results-empty = No steps yet.
results-match-exact = { $full } and { $accumulated }: the same loss, to the last bit, as the maths says.
results-match-rounding = { $full } and { $accumulated }: equal up to float rounding; the losses are { $difference } apart (relative), what two summation orders in f32 give.
results-differ = { $full } and { $accumulated }: the losses differ by { $difference } (relative), more than float rounding explains.
results-grad-ratio = (gradient x{ $ratio } the full batch's)
results-ratio-note = A relative error of N − 1 with a cosine of 1 means a gradient N times the full batch's: |N·g − g| / |g| = N − 1.
results-no-agreement = No agreement to report: { $run } diverged at step { $step } (its loss, gradient or parameters became NaN or infinite).
results-diverged-at = Diverged at step { $step }: a loss, gradient or parameter became NaN or infinite, so this run stopped training there.
running-stats-title = BatchNorm running statistics
running-stats-updates = { $run }: { $updates } updates in { $steps } steps ({ $per } per step); first running means: { $values }

## Charts
chart-loss = Training loss
chart-grad-error = Gradient error vs full batch (log scale)
chart-grad-norm = Gradient norm
chart-cosine = Cosine with the full-batch gradient
chart-accuracy = Test accuracy
chart-learning-rate = Learning rate per optimizer step
chart-clip-factor = Clipping factor per step (1 = not clipped)
chart-summary-series = { $run }: { $value } at step { $step }, { $shape ->
        [rising] rising
        [falling] falling
        [oscillating] going up and down
       *[flat] flat
    } over the last steps.
chart-summary-overlap = These runs lie on top of each other: { $runs }.
chart-summary-diverged = { $run } diverged at step { $step }.
charts-runs-shown = Runs on the charts (select to show or hide)
charts-more = More charts
embed-settings = Settings
embed-about = About this experiment
chart-step = optimizer step
chart-download-png = Download PNG
chart-boundary = Decision boundary: { $run }
charts-boundaries = Decision boundaries after step { $step }
download-csv = Download metrics (CSV)
chart-no-data = Plotted once the first step has run.
chart-diverged = diverged at step { $step }
chart-error-floor = exact 0 drawn at 1e-12

## Memory
memory-title = Peak activation memory
memory-gpu-source = Bytes the WebGPU engine allocated for training activations.
memory-model-source = Bytes of activations the CPU engine holds (the GPU would allocate the same for this network).
memory-bar = { $run }: { $bytes }
memory-full-batch = full batch of { $batch }
step-time-title = Time per optimizer step
step-time-cpu-worker-source = Measured by the CPU engine's own clock (WebAssembly, in a Web Worker): the mean of each run's last { $steps } steps, from its first training operation to the optimizer step (zero_grad, forward and backward passes, clipping, the update), without the full-batch reference gradient and the test-set evaluation the Lab adds for its charts.
step-time-cpu-page-source = Measured by the CPU engine's own clock (WebAssembly, on the page): the mean of each run's last { $steps } steps, from its first training operation to the optimizer step (zero_grad, forward and backward passes, clipping, the update), without the full-batch reference gradient and the test-set evaluation the Lab adds for its charts.
step-time-gpu-source = Measured by the GPU's own clock (WebGPU timestamp queries): the mean of each run's last { $steps } steps, from its first training operation to the optimizer step, without the full-batch reference gradient and the test-set evaluation the Lab adds for its charts. Browsers round these timestamps (to 0.1 ms in Chromium), so short steps read coarsely.
step-time-gpu-none = This GPU adapter offers no timestamp queries, and the WebGPU engine submits every run's work together, so no run can be timed on its own here. Open the experiment with the CPU engine (engine=cpu in the address) to measure each run.
step-time-bar = { $run }: { $ms } ms
step-time-pending = { $run }: not timed yet
step-time-lesson = Memory falls with the number of micro-batches; the time per optimizer step does not: every step still runs all B examples forward and backward, in more and smaller passes (each with its own overhead). Accumulation trades time for memory, never the other way round.
run-scaling-0 = full batch
run-scaling-1 = accumulate 4, loss / 4
run-scaling-2 = accumulate 4, unscaled
run-norms-0 = BatchNorm, full batch
run-norms-1 = BatchNorm, accumulate 4
run-norms-2 = LayerNorm, full batch
run-norms-3 = LayerNorm, accumulate 4
run-norms-4 = GroupNorm, full batch
run-norms-5 = GroupNorm, accumulate 4
run-variable_length-0 = full batch
run-variable_length-1 = accumulate 4, mean of means
run-variable_length-2 = accumulate 4, / total tokens
run-pitfalls-0 = correct accumulation
run-pitfalls-1 = zero_grad forgotten
run-pitfalls-2 = zero_grad every micro-batch
run-pitfalls-3 = clip every micro-batch
run-pitfalls-4 = scheduler every micro-batch
run-pitfalls-5 = zero_grad forgotten, no clipping
run-memory-0 = full batch
run-memory-1 = accumulate 4
run-memory-2 = accumulate 16

## Embedding
embed-open-full = Open in the full Lab ↗

## Quiz
quiz-title = Quiz: gradient accumulation
quiz-intro = Only your first answer to each question counts towards the score; retry as often as you like to learn. Progress is saved in this browser.
quiz-intro-lms = Only your first answer to each question counts towards the score; retry as often as you like to learn. Progress is saved in your course.
quiz-score-line = First-try score: { $correct } of { $answered } answered correctly ({ $answered } of { $total } questions answered)
quiz-counter = Question { $number } of { $total } · { $topic }
quiz-select-all = Select all that apply.
quiz-your-answer = Your answer
quiz-choose-first = Choose an option first.
quiz-verdict-chosen-right = ✓ Correct, and you chose it
quiz-verdict-missed = ✓ Correct (not chosen)
quiz-verdict-chosen-wrong = ✗ Not correct, and you chose it
quiz-verdict-wrong = ✗ Not correct
quiz-correct = Correct!
quiz-not-quite = Not quite.
quiz-see-in-lab = See it in the Lab
quiz-previous = Previous
quiz-check = Check answer
quiz-try-again = Try again
quiz-review-title = Missed at the first try, by topic
quiz-show-answer = Show the answer
quiz-answer-hidden = Only your choice is explained so far: try again, and the right answer shows after a second try or when you ask for it.
quiz-next = Next question
quiz-see-result = See your result
quiz-question-link = Question { $number }
quiz-passed = You passed with { $percent } % (pass mark { $needed }).
quiz-name-label = Your name, as it should appear on the certificate
quiz-get-certificate = Get my certificate
quiz-not-passed = { $percent } %: the pass mark is { $needed }. Revisit the questions you missed, then start a new attempt.
quiz-new-attempt = Start a new attempt
quiz-result-title = Your result
quiz-other-tab-new-attempt = A new attempt was started in another tab; this page now shows it.
quiz-restore-kept = { $reason }. It was kept under "{ $key }"; a new attempt has started.
quiz-restore-lost = { $reason }. A new attempt has started.
quiz-restore-unreadable = saved quiz progress could not be read: { $detail }
quiz-restore-other-version = saved quiz progress belongs to question bank version { $saved }, this is version { $current }
scorm-call-failed = The course platform did not save your progress: { $call } failed ({ $detail }). Your answers stay in this page and are sent again with your next answer.
scorm-suspend-too-long = the progress takes { $length } characters, more than the { $limit } this course platform keeps; it is kept in this page only
scorm-suspend-unreadable = the progress saved in the course could not be read: { $detail }
quiz-error-no-question = there is no question { $index }
quiz-error-wrong-kind = this answer does not fit the question
quiz-error-no-option = option { $index } does not exist
quiz-error-empty = choose at least one option
quiz-error-number = enter a number
storage-blocked = browser storage is blocked, so progress is not saved
storage-save-failed = could not save progress (storage full or blocked)

## Certificate
cert-certifies = This certifies that
cert-learned = What was learned
cert-scan = Scan to verify this certificate
cert-issued-signed = Signed by { $issuer } ({ $did }): an Open Badges 3.0 credential that anyone can verify.
cert-issued-integrity = Issued by Gradient Accumulation Lab in this browser. Integrity only: the ID proves the name, score and date were not changed, not who issued it.
cert-score = Score
cert-kicker = Certificate of completion
cert-quiz-name = Gradient Accumulation Lab quiz
cert-passed-short = passed with { $score } % on { $date } (quiz version { $version })
cert-passed = passed the Gradient Accumulation Lab quiz with { $score } % on { $date } (quiz version { $version })
cert-id-label = Certificate ID:
cert-share-label = Share link
cert-open-verify = Open the verification page
cert-print = Print
cert-download = Download PNG
cert-downloaded = PNG downloaded.
cert-download-failed = Could not make the PNG: { $reason }
cert-verify-hint = Verify this ID in the Lab: Verify a certificate
cert-stored-invalid = The stored certificate is not valid: { $reason }
cert-none-title = No certificate yet
cert-none-text = Pass the quiz to earn one.
cert-take-quiz = Take the quiz
cert-error-length = a certificate ID has { $expected } characters (not counting dashes); this one has { $got }
cert-error-character = "{ $character }" at position { $position } is not used in certificate IDs
cert-error-check = the check characters do not match: a character was mistyped or changed
cert-error-format = this ID uses format { $format }, which this version of the app does not know
cert-error-score = the ID holds an impossible score of { $score } %
cert-error-future = the ID's date { $date } is in the future
cert-error-name-mismatch = the name does not match this certificate (or the ID was altered)
cert-error-name = the name must be 1 to { $max } characters
cert-error-date = the date must be between 2025-01-01 and 2114
cert-error-issued = this ID names a credential signed by its issuer: check it with the issuer, not with a name
cert-error-issued-range = an issued ID needs a serial from 1 to { $max } and a nonce below { $limit }

## Verification
verify-title = Verify a certificate
verify-id-label = Certificate ID
verify-name-label = Name on the certificate
verify-button = Verify
verify-valid-text = { $name } passed the Gradient Accumulation Lab quiz (version { $version }) with { $score } % on { $date }.
verify-trust = What these checks mean. A signed credential (an ID from an issuer, or a certificate file) is checked here, in your browser: its Ed25519 signature (eddsa-jcs-2022) against the key its issuer publishes at its own web address (did:web), and its status against the issuer's signed revocation list. A valid signature proves that whoever controls that address issued it to that name with that score, and that nothing was changed since; it does not prove who took the quiz, nor that anyone sat it (the quiz's answers ship with the app). An integrity-only ID (made by the app when no issuer was reachable) proves integrity only: the name, score, date and quiz version are exactly those it was made with, and a typo or an edit is detected. It does not prove who issued it: the app alone has no server to keep a signing key secret, so anyone with this app's code could make a valid ID.

## Signed credentials (Open Badges 3.0): texts signed into the credential, name rules, verification
badge-credential-name = Gradient Accumulation Lab: quiz passed
badge-credential-description = { $name } answered { $correct } of the { $total } questions of the Gradient Accumulation Lab quiz (version { $version }) correctly on the first try: { $score } %.
badge-achievement-name = Gradient accumulation quiz, version { $version }
badge-achievement-description = Passing the quiz of Gradient Accumulation Lab, an interactive lab that trains a small neural network to show when accumulating gradients over micro-batches matches one large batch and when it does not: loss scaling, normalization layers, variable-size micro-batches, gradient clipping and learning-rate schedules.
badge-criteria = Answer all { $total } questions of the quiz (version { $version }) and get at least { $needed } % of them right on the first try. Only the first answer to each question counts; the issuer grades the answers itself.
badge-result-name = Share of questions answered correctly on the first try
badge-name-error-empty = the name is empty
badge-name-error-too-long = the name has { $chars } characters; at most { $max } are allowed
badge-name-error-control = the name contains the control character U+{ $code }
badge-name-error-direction = the name contains the text-direction control U+{ $code }, which could reorder the text around it
verify-error-malformed = this is not a readable Open Badge credential: its { $field } is missing or malformed
verify-error-unknown-issuer = the credential names the issuer { $issuer }, but the DID document given is that of { $did }
verify-error-unknown-key = the credential was signed with { $key }, which its issuer does not list as a signing key
verify-error-unsigned = the credential has no signature
verify-error-unsupported-proof = the credential's signature is not an eddsa-jcs-2022 Data Integrity proof of an assertion
verify-error-malformed-proof = the credential's signature is malformed
verify-error-tampered = the signature does not match the content: the credential was changed after it was signed
verify-error-status-mismatch = the status list given is { $url }, but the credential's status is kept in { $expected }
verify-error-status-invalid = the status list is not a valid revocation list signed by the credential's issuer
verify-error-status-index = the credential's status index { $index } is outside its status list

## Signed certificates: asking the issuer, the certificate card, the verify page
issue-busy = Asking the certificate issuer to grade your answers and sign your certificate…
issue-unreachable = The certificate issuer could not be reached ({ $reason }). Your answers are saved.
issue-try-again = Try again
issue-integrity-only = Get an integrity-only certificate instead
issue-not-passed = The issuer graded your answers as not passing ({ $percent } %), so it signed no certificate. Only the first answer to each question counts.
issue-not-passed-no-score = The issuer graded your answers as not passing, so it signed no certificate. Only the first answer to each question counts.
issue-refused = The issuer refused the request: { $detail }
issue-rate-limited = The issuer has had too many requests from this address. Wait { $seconds } s, then try again.
issue-rate-limited-later = The issuer has had too many requests from this address. Wait a minute, then try again.
cert-stored-kept = The certificate saved in this browser could not be read ({ $reason }); it was kept under "{ $key }", and nothing was deleted.
cert-stored-unreadable = The certificate saved in this browser (under "{ $key }") could not be read: { $reason }
cert-signed = Signed credential (Open Badges 3.0)
cert-signed-by = Signed by { $issuer }:
cert-integrity-only = Integrity only: no issuer signed this certificate. Its ID proves that the name, score and date were not changed, not who issued it.
cert-download-json = Download credential (JSON)
cert-json-downloaded = Credential downloaded.
cert-baked-note = The PNG carries the signed credential inside it, so the image alone can be verified.
verify-name-hint = Only needed for integrity-only IDs (made by the app without an issuer).
verify-file-label = Or check a file: a certificate PNG or a credential (JSON)
verify-file-hint = Choose a file, or drop it here.
verify-checking = Checking…
verify-checked-id = Checked: certificate ID { $id }
verify-checked-file = Checked: the file { $file }
verify-status-valid = Valid: signed by its issuer
verify-status-revoked = Revoked by its issuer
verify-status-tampered = Not valid: changed after signing
verify-status-unknown-issuer = Unknown issuer
verify-status-unknown-id = Unknown certificate ID
verify-status-unreachable = Issuer unreachable
verify-status-integrity-only = Valid ID (integrity only)
verify-status-invalid = Not valid
verify-checked-signature = Signature: { $suite }, made with the issuer's key { $key }; it matches the content.
verify-checked-issuer = Issued by { $issuer } ({ $did })
verify-checked-active = Status: not revoked (checked just now against the issuer's signed status list).
verify-checked-revoked = Status: revoked (the issuer's signed status list marks it).
verify-checked-status-unknown = Status: unknown (the issuer's status list could not be fetched).
verify-integrity-only-note = Integrity only: anyone could make this ID; it proves that name, score and date were not changed.
verify-reason-unknown-id = the issuer has no credential with this ID (check it for typos)
verify-reason-unreachable = the certificate issuer could not be reached ({ $reason }), so nothing was checked
verify-reason-did = the issuer { $did } could not be resolved: { $reason }
verify-reason-status-unreachable = the signature is valid, but the issuer's status list could not be fetched ({ $reason }), so it is unknown whether the credential was revoked
verify-reason-revoked = the issuer has withdrawn this credential; it no longer certifies anything
verify-file-not-baked = this PNG carries no credential (no openbadgecredential chunk): it shows a certificate but cannot prove one
verify-file-unreadable = the file could not be read: { $reason }
verify-file-not-credential = this file is neither a credential (JSON) nor a certificate PNG

## Benchmark page
bench-title = Benchmark
bench-intro = The canonical workload on the CPU engine (wasm) and on WebGPU. Figures appear below when done.
bench-running = running…

## Inside one optimizer step (the step-through view)
step-title = Inside one optimizer step
step-intro = Replay one optimizer step phase by phase: each micro-batch's forward, loss and backward, the gradient buffer filling up, then the update. Every number comes from the engine that trains.
step-open = Look inside the next optimizer step
step-open-short = Inside one step
step-close = Close the step-through
step-controls = Phases of the optimizer step
step-previous = Previous phase
step-next = Next phase
step-play = Play phases slowly
step-play-stop = Stop playing phases
step-next-step = Next optimizer step
step-waiting = Taking a traced step…
step-of-step = Optimizer step { $step }.
step-announce = Phase { $phase } of { $phases }:
step-phase-forward = micro-batch { $k }, forward (its activations are held in memory).
step-phase-loss = micro-batch { $k }, loss (weighted before backward).
step-phase-backward = micro-batch { $k }, backward (activations freed, its gradient added to the buffer).
step-phase-clip = clipping the accumulated gradient.
step-phase-optimizer = optimizer step (the parameters move).
step-phase-zero-grad = zero_grad (the buffer is emptied for the next step).
step-activity-forward = forward
step-activity-loss = loss
step-activity-backward = backward
step-activity-waiting = waiting
step-activity-clip = clipping
step-activity-optimizer = optimizer step
step-activity-zero-grad = zero_grad
step-accumulated = { $k } of { $n }
step-accumulated-stale = { $k } of { $n } + earlier steps
step-table-caption = The gradient buffer of each run at this phase, against the full-batch gradient at the same weights
step-col-doing = doing
step-col-accumulated = micro-batches in buffer
step-col-weight = loss weight
step-col-ratio = ‖buffer‖ / ‖full batch‖
step-col-error = relative error
step-col-cosine = cosine
step-col-memory = activations held
step-weight-full = mean over { $items } items
step-weight-mean-over-n = mean over { $items } items ÷ { $n }
step-weight-unscaled = mean over { $items } items (not ÷ { $n })
step-weight-total = sum over { $items } items ÷ { $total }
step-code-label = The run's training loop in PyTorch, the line being executed marked
step-run-label = Code and gradient of
step-heatmap-accumulated = First layer's weight gradient in the buffer (first 16 units; red positive, blue negative, the 10% largest at full colour)
step-heatmap-full = The full-batch gradient of the same weights, on the same colour scale
step-memory-label = Activation memory of each run over the phases of this step; the tallest peak holds { $bytes }
step-memory-caption = Activation memory over the step (tallest peak { $bytes }): accumulation holds one micro-batch at a time.
step-bn-caption = BatchNorm statistics of the first layer: micro-batch { $k } against the whole batch
step-bn-region = BatchNorm statistics
step-bn-channel = channel
step-bn-micro-mean = micro-batch mean
step-bn-batch-mean = batch mean
step-bn-micro-variance = micro-batch variance
step-bn-batch-variance = batch variance
code-zero-grad-in-loop = wrong: empties the buffer before every micro-batch
code-loss-over-n = scaled so that the N micro-batches add up to the batch mean
code-loss-unscaled = not divided by N: the gradient comes out N times too large
code-loss-total = sum of the item losses ÷ the items in the whole step
code-backward-adds = adds into .grad; nothing is applied yet
code-clip-in-loop = wrong: clips each partial sum, not the whole gradient
code-scheduler-in-loop = wrong: the schedule advances N times per update
code-zero-grad-forgotten = missing: gradients of earlier steps keep adding up

## Linked views: a chart's crosshair and the history scrubber
chart-inspect-step = Step { $step }
results-title-inspected = After step { $step } (inspecting a past step; training is at step { $live })
scrubber-label = Inspect a past step
scrubber-value = step { $step } of { $live }
scrubber-live = showing the live step
scrubber-at = showing step { $step }
scrubber-back-to-live = Back to the live step
boundaries-snapshot = Inspecting step { $step }: the boundaries drawn after step { $kept }, the nearest earlier of { $count } kept snapshots ({ $bytes } in memory; at most 24 are kept, spread over the run).

## The presets as a course: predict, then observe; the guided path
course-strip = Experiment { $position } of { $total }
course-strip-label = The course's experiments
course-observed = (observed)
course-next = Next experiment: { $title }
course-next-hint = Train at least { $steps } steps to observe this experiment; then the next one opens.
course-summary-title = You have run every experiment
course-summary-title-partial = The end of the course ({ $observed } of { $total } experiments observed)
course-summary = Accumulating N micro-batches gives the full batch's gradient when each loss is scaled by 1/N (or divided by the step's total item count when micro-batches differ in size), with one micro-batch's activation memory; without the scaling the gradient is N times too large; BatchNorm's statistics do not accumulate; zero_grad, clipping and the scheduler belong to the optimizer step, not to each micro-batch.
course-to-quiz = Take the quiz
predict-title = Predict first
predict-lock = Lock in my prediction
predict-locked = Your prediction: { $choice }
predict-wait = Train { $steps } steps to see what your run measures.
predict-right = Right.
predict-wrong = Not quite: the answer is { $answer }.
predict-quiz = Answer the quiz question on this.
predict-scaling-question = The unscaled run adds 4 micro-batch gradients without dividing by 4. Its gradient will be … the full batch's.
predict-scaling-choice-0 = the same as
predict-scaling-choice-1 = 4 times
predict-scaling-choice-2 = a quarter of
predict-scaling-choice-3 = 16 times
predict-scaling-why = Each micro-batch's mean loss has the full batch's scale; adding 4 of them without dividing by 4 gives 4 times the full-batch gradient.
predict-scaling-measured = Your run measured the unscaled gradient at { $ratio } times the full batch's.
predict-scaling_adam-question = With Adam, the unscaled run's gradient is still 4 times too large. Its training loss will …
predict-scaling_adam-choice-0 = stay close to the full batch's
predict-scaling_adam-choice-1 = oscillate as with SGD
predict-scaling_adam-choice-2 = fall 4 times faster
predict-scaling_adam-why = Adam divides each update by a running estimate of the gradient's size, so a constant factor of 4 almost cancels (only epsilon notices it).
predict-scaling_adam-measured = In your run the training loss is { $unscaled } unscaled against { $full } for the full batch.
predict-norms-question = Accumulated over 4 micro-batches, which normalization will NOT give the full batch's gradient?
predict-norms-choice-0 = BatchNorm
predict-norms-choice-1 = LayerNorm
predict-norms-choice-2 = GroupNorm
predict-norms-why = BatchNorm normalizes with statistics over the items of each micro-batch, not of the whole batch; LayerNorm and GroupNorm normalize each item on its own, so accumulation matches.
predict-norms-measured = Your run: BatchNorm accumulated is off the full-batch gradient by { $batch }, LayerNorm by { $layer }.
predict-variable_length-question = Sequences have different lengths, so micro-batches hold different numbers of tokens. Which loss gives the full batch's gradient?
predict-variable_length-choice-0 = the mean of each micro-batch's mean, divided by N
predict-variable_length-choice-1 = each micro-batch's token-loss sum divided by the step's total token count
predict-variable_length-choice-2 = both, they are the same
predict-variable_length-why = A mean of means weighs tokens in small micro-batches more; dividing each sum by the total token count weighs every token the same, as the full batch does.
predict-variable_length-measured = Your run: mean of means is off by { $means }, dividing by the total token count by { $total }.
predict-pitfalls-question = If zero_grad is forgotten (and nothing clips), the gradient norm over the steps will …
predict-pitfalls-choice-0 = stay about the same
predict-pitfalls-choice-1 = grow step after step
predict-pitfalls-choice-2 = fall to zero
predict-pitfalls-why = Without zero_grad every step's gradient is added to all the earlier ones that stay in .grad, so the applied gradient keeps growing.
predict-pitfalls-measured = Your run: the forgotten zero_grad's gradient norm went from { $first } at step 1 to { $last } at step { $steps }.
predict-memory-question = With N = 4 micro-batches, peak activation memory will be about … of the full batch's.
predict-memory-choice-0 = the same as
predict-memory-choice-1 = a quarter
predict-memory-choice-2 = 4 times
predict-memory-why = Activations are held from a micro-batch's forward to its backward only, so the peak holds one micro-batch: a quarter of the items.
predict-memory-measured = Here: { $four } for 4 micro-batches against { $full } for the full batch, { $ratio } of it.
course-unreadable = Your saved course progress could not be read; it is kept aside under { $key } and the course starts afresh.
step-data-caption = The step's { $total } items; micro-batch { $k }'s { $items } in colour (the ones its forward and backward see).
step-data-caption-none = The step's { $total } items.
