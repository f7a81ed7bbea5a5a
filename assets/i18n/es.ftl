# Mensajes en español de Gradient Accumulation Lab. Mismos ids que en.ftl (una prueba falla si
# falta alguno).

## Estructura del sitio
app-title = Gradient Accumulation Lab
nav-main = Principal
nav-lab = Laboratorio
nav-quiz = Cuestionario
nav-verify = Verificar un certificado
nav-language = Idioma
notice-unknown-page = Página desconocida «{ $value }»; se muestra el laboratorio.
notice-unknown-scenario = Escenario desconocido «{ $value }»; se muestra el predeterminado.
notice-bad-parameter = «{ $value }» no es un valor válido para { $parameter }; se usa el predeterminado.
notice-bad-combination = Estos ajustes no se pueden combinar; se usan los predeterminados.
notice-duplicate-parameter = { $parameter } aparece { $count } veces en el enlace; se usa el primer valor, «{ $value }».
notice-embed-overrides-view = Este contenido incrustado muestra { $embed }; se ignoró la vista «{ $view }» del enlace.
notice-preset-fixes = El escenario { $scenario } fija { $parameters }; se ignoraron los valores del enlace. Elige la zona libre para cambiarlos.
quiz-unknown-question = El cuestionario no tiene la pregunta «{ $value }»; se abre donde lo dejaste.
quiz-load-failed = No se pudo cargar el cuestionario: { $reason }

## Escenarios
scenario-select-label = Experimento
scenarios-nav = Escenarios
scenario-scaling-title = Lote completo frente a acumulado frente a sin escalar (SGD)
scenario-scaling-explanation = Tres ejecuciones parten de los mismos pesos y ven los mismos 256 ejemplos en cada paso. La primera los toma como un solo lote. La segunda los divide en 4 microlotes de 64, escala la pérdida de cada microlote por 1/4 y suma los gradientes antes de un paso del optimizador. La tercera suma los gradientes sin el 1/4, así que su gradiente es 4 veces demasiado grande.
scenario-scaling-notice = Observa: las curvas del lote completo y de 1/N coinciden; la ejecución sin escalar entrena como si su tasa de aprendizaje fuera 4 veces mayor y oscila.
scenario-scaling_adam-title = Lo mismo con Adam
scenario-scaling_adam-explanation = Las mismas tres ejecuciones con Adam. Adam divide cada paso por una estimación móvil del tamaño del propio gradiente, así que multiplicar cada gradiente por 4 también multiplica esa estimación por 4 y ambos se cancelan; solo el pequeño épsilon del denominador nota la diferencia.
scenario-scaling_adam-notice = Observa: con Adam la ejecución sin escalar se mantiene cerca de las otras dos, mientras que con SGD no.
scenario-norms-title = BatchNorm frente a LayerNorm frente a GroupNorm con acumulación
scenario-norms-explanation = BatchNorm normaliza con la media y la varianza de los ejemplos del lote que ve. Con acumulación ve un microlote cada vez, así que sus estadísticas (y por tanto su gradiente) difieren de las del lote completo. LayerNorm y GroupNorm normalizan cada ejemplo por separado, así que la acumulación da el gradiente del lote completo.
scenario-norms-notice = Observa: el error de gradiente de BatchNorm está muy por encima del de LayerNorm y GroupNorm, que es 0 (los dos motores suman las filas de cada microlote en el orden del lote completo; como mucho el redondeo, unos 1e-7, si el compilador de una GPU suma en otro orden); sus estadísticas móviles se actualizan una vez por microlote, 4 veces por paso del optimizador.
scenario-variable_length-title = Secuencias de longitud variable
scenario-variable_length-explanation = Cada ejemplo es una secuencia cuyos tokens tienen cada uno una pérdida, y las secuencias tienen longitudes distintas. Promediar por microlote y luego promediar esas medias pesa más un token de un microlote corto que uno de un microlote largo. Dividir la pérdida sumada por el número total de tokens de todo el lote da a cada token el mismo peso, como hace el lote completo.
scenario-variable_length-notice = Observa: «media de medias» tiene un error de gradiente claro; «/ tokens totales» coincide con el lote completo.
scenario-pitfalls-title = Trampas: zero_grad, recorte, planificador
scenario-pitfalls-explanation = Cuatro errores que cometen los bucles de entrenamiento reales, cada uno frente al bucle correcto: olvidar zero_grad (los gradientes se acumulan entre pasos), llamarlo en cada microlote (solo sobrevive el gradiente del último microlote), recortar cada microlote en vez del gradiente sumado, y avanzar el planificador de la tasa de aprendizaje por microlote en vez de por paso del optimizador.
scenario-pitfalls-notice = Observa: el recorte acorta el gradiente de la ejecución correcta pero nunca lo gira: su error de gradiente es 1 menos su factor de recorte y su coseno se queda exactamente en 1. Recorte en cada microlote recorta las sumas parciales a medida que crecen, así que los primeros microlotes se encogen más que los últimos: su factor de recorte difiere del de la ejecución correcta y su gradiente gira (coseno por debajo de 1). zero_grad olvidado guarda todos los gradientes antiguos en el búfer: sin recorte, la norma de su gradiente crece paso tras paso y su pérdida da saltos; con recorte, el búfer se reescala en su sitio en cada paso, así que la suma acumulada actúa como un momento con una longitud de paso fija, lo que en este problema fácil le favorece, pero sigue gradientes antiguos en vez del actual (coseno muy por debajo de 1). zero_grad en cada microlote conserva solo el último microlote. El planificador avanzado por microlote calienta y decae 4 veces demasiado rápido (gráfica de la tasa de aprendizaje).
scenario-memory-title = Memoria de activaciones
scenario-memory-explanation = La acumulación cambia tiempo por memoria: las pasadas hacia delante y hacia atrás solo guardan las activaciones de un microlote. Las barras muestran la memoria de activaciones del microlote más grande de cada ejecución frente al lote completo.
scenario-memory-notice = Observa: las curvas de entrenamiento son iguales en las tres ejecuciones, mientras que la memoria de activaciones baja con N.
scenario-sandbox-title = Zona libre
scenario-sandbox-explanation = Elige tú los datos, la red, el optimizador, B y N. Tres ejecuciones entrenan en paralelo: el lote completo, N microlotes acumulados con la pérdida escalada por 1/N, y lo mismo sin escalar.
scenario-sandbox-notice = Observa: pérdida / N coincide con el lote completo cuando los microlotes tienen el mismo número de elementos y ningún BatchNorm los normaliza por separado; el gradiente sin escalar es N veces demasiado grande.
scenario-sandbox-notice-one = Observa: con N = 1 no hay nada que acumular: las tres ejecuciones toman el lote entero de una vez y son el lote completo.
scenario-sandbox-notice-matches = Observa: con estos ajustes la ejecución con pérdida / { $n } debe coincidir con el lote completo (microlotes iguales, sin BatchNorm), y el gradiente de la ejecución sin escalar es { $n } veces demasiado grande.
scenario-sandbox-notice-batch-norm = Observa: con BatchNorm la ejecución con pérdida / { $n } no puede coincidir con el lote completo: cada microlote se normaliza con su propia media y varianza.
scenario-sandbox-notice-variable-items = Observa: con secuencias de longitud variable los microlotes tienen distinto número de tokens, así que pérdida / { $n } es una media de medias y no coincide con el lote completo; dividir por el total de tokens sí coincidiría (mira el escenario de longitud variable).

## Ejecuciones
run-full-batch = lote completo
run-accumulate-scaled = acumular { $n }, pérdida / { $n }
run-accumulate-unscaled = acumular { $n }, sin escalar

## Controles
controls-title = Ajustes
controls-preset-note = Este escenario fija sus ajustes. La semilla y los pasos por fotograma sí se aplican; para cambiar el resto, cópialo a la zona libre.
controls-copy-to-sandbox = Editar estos ajustes en la zona libre
control-scenario-label = Escenario
control-dataset-label = Datos
control-hidden-label = Anchuras ocultas
control-hidden-hint = anchuras separadas por «-», por ejemplo 64-64
control-activation-label = Activación
control-norm-label = Normalización
control-optimizer-label = Optimizador
control-lr-label = Tasa de aprendizaje
control-batch-label = Tamaño de lote B
control-n-label = Microlotes N
control-seed-label = Semilla
control-spf-label = Pasos por fotograma (como máximo)
control-error-scenario = no existe el escenario «{ $value }»
control-error-hidden-count = usa de 1 a { $max } capas ocultas
control-error-hidden-width = cada anchura debe estar entre 1 y { $max }; { $width } no lo está
control-error-hidden-format = escribe números enteros separados por «-», por ejemplo 64-64
control-error-group-width = GroupNorm usa 4 grupos: cada anchura debe ser múltiplo de 4
control-error-learning-rate = elige una tasa de aprendizaje entre { $low } y { $high }
control-error-batch = elige un tamaño de lote B entre { $low } y { $high }
control-error-n-max = N puede ser como mucho { $max } microlotes
control-error-n-zero = N debe ser al menos 1
control-error-n-too-large = N = { $n } es mayor que B = { $batch }: algún microlote quedaría vacío
control-error-not-divisible = B = { $batch } no es divisible entre N = { $n }: los microlotes tendrían tamaños distintos
control-error-batchnorm-micro = BatchNorm necesita al menos 2 ejemplos por microlote
control-error-steps-per-frame = elige de { $low } a { $high } pasos por fotograma
control-error-number = escribe un número
controls-invalid = Corrige los ajustes marcados en rojo en Ajustes para empezar.
dataset-spiral = espiral
dataset-two_moons = dos lunas
dataset-circles = círculos
dataset-xor_blobs = nubes XOR
dataset-variable_length_sequences = secuencias de longitud variable
activation-relu = ReLU
activation-tanh = tanh
activation-gelu = GELU
norm-none = ninguna
norm-batch = BatchNorm
norm-layer = LayerNorm
norm-group = GroupNorm
optimizer-sgd = SGD
optimizer-momentum = SGD con momento
optimizer-adam = Adam
optimizer-adamw = AdamW

## Reproducción
transport-label = Entrenamiento
button-play = Reproducir
button-pause = Pausa
button-step = Un paso
button-reset = Reiniciar
status-idle = Listo. Pulsa reproducir para entrenar.
status-running = Entrenando…
status-paused = En pausa en el paso { $step }.
status-pausing = Pausando: terminando el paso que ya había empezado…
status-finished = Terminados { $step } pasos.
status-preparing = Preparando el motor…
status-error = El entrenamiento se detuvo: { $reason }
status-step-limit = Se alcanzó el límite de { $step } pasos; pulsa reiniciar para empezar de nuevo.
status-all-diverged = Todas las ejecuciones divergieron (hasta el paso { $step }); cambia los ajustes y pulsa reiniciar.

## Motor
engine-adapter-hidden = el navegador no revela el nombre del adaptador
engine-label = Motor
engine-webgpu = WebGPU: { $adapter }
engine-cpu = CPU (WebAssembly)
engine-cpu-fallback = CPU de respaldo: { $reason }
engine-fallback-notice = WebGPU no está disponible aquí ({ $reason }), así que el laboratorio entrena en el motor de CPU; los números son los mismos, solo más lento.
engine-lost-notice = WebGPU se detuvo ({ $reason }); el laboratorio repitió la ejecución en el motor de CPU y continúa allí con los mismos números.
engine-no-webgpu = este navegador no tiene WebGPU
engine-no-adapter = el navegador no ofrece ningún adaptador WebGPU
engine-gpu-error = WebGPU falló: { $reason }
engine-chosen-cpu = Motor de CPU: { $times }x más rápido que WebGPU en este equipo (medido en este experimento)
engine-chosen-gpu = { $times }x tan rápido como el motor de CPU en este equipo
engine-forced-cpu = el motor de CPU se eligió en la URL

## Resultados
results-title = Tras el paso { $step }
results-run = ejecución
results-loss = pérdida de entrenamiento
results-grad-error = error de gradiente frente al lote completo
results-cosine = coseno con el lote completo
results-grad-norm = norma del gradiente
results-accuracy = precisión en prueba
results-none = no medido
results-empty = Aún no hay pasos.
results-match-exact = { $full } y { $accumulated }: la misma pérdida, hasta el último bit, como dicen las matemáticas.
results-match-rounding = { $full } y { $accumulated }: iguales salvo redondeo; las pérdidas difieren en { $difference } (relativo), lo que dan dos órdenes de suma en f32.
results-differ = { $full } y { $accumulated }: las pérdidas difieren en { $difference } (relativo), más de lo que explica el redondeo.
results-grad-ratio = (gradiente x{ $ratio } el del lote completo)
results-ratio-note = Un error relativo de N − 1 con coseno 1 significa un gradiente N veces el del lote completo: |N·g − g| / |g| = N − 1.
results-no-agreement = No hay coincidencia que informar: { $run } divergió en el paso { $step } (su pérdida, gradiente o parámetros pasaron a NaN o infinito).
results-diverged-at = Divergió en el paso { $step }: una pérdida, un gradiente o un parámetro pasó a NaN o infinito, así que esta ejecución dejó de entrenar ahí.
running-stats-title = Estadísticas móviles de BatchNorm
running-stats-updates = { $run }: { $updates } actualizaciones en { $steps } pasos ({ $per } por paso); primeras medias móviles: { $values }

## Gráficas
chart-loss = Pérdida de entrenamiento
chart-grad-error = Error de gradiente frente al lote completo (escala log)
chart-grad-norm = Norma del gradiente
chart-cosine = Coseno con el gradiente del lote completo
chart-accuracy = Precisión en prueba
chart-learning-rate = Tasa de aprendizaje por paso del optimizador
chart-clip-factor = Factor de recorte por paso (1 = sin recortar)
chart-summary-series = { $run }: { $value } en el paso { $step }, { $shape ->
        [rising] subiendo
        [falling] bajando
        [oscillating] subiendo y bajando
       *[flat] plana
    } en los últimos pasos.
chart-summary-overlap = Estas ejecuciones quedan una encima de otra: { $runs }.
chart-summary-diverged = { $run } divergió en el paso { $step }.
charts-runs-shown = Ejecuciones en las gráficas (selecciona para mostrar u ocultar)
charts-more = Más gráficas
embed-settings = Ajustes
embed-about = Sobre este experimento
chart-step = paso del optimizador
chart-download-png = Descargar PNG
chart-boundary = Frontera de decisión: { $run }
charts-boundaries = Fronteras de decisión tras el paso { $step }
download-csv = Descargar métricas (CSV)
chart-no-data = Se dibuja tras el primer paso.
chart-diverged = divergió en el paso { $step }
chart-error-floor = el 0 exacto se dibuja en 1e-12

## Memoria
memory-title = Memoria máxima de activaciones
memory-gpu-source = Bytes que el motor WebGPU reservó para las activaciones de entrenamiento.
memory-model-source = Bytes de activaciones que guarda el motor de CPU (la GPU reservaría lo mismo para esta red).
memory-bar = { $run }: { $bytes }
memory-full-batch = lote completo de { $batch }
step-time-title = Tiempo por paso del optimizador
step-time-cpu-worker-source = Medido con el reloj del propio motor de CPU (WebAssembly, en un Web Worker): la media de los últimos { $steps } pasos de cada ejecución, desde su primera operación de entrenamiento hasta el paso del optimizador (zero_grad, pasadas hacia delante y hacia atrás, recorte, actualización), sin el gradiente de referencia del lote completo ni la evaluación en el conjunto de prueba que el Laboratorio añade para sus gráficas.
step-time-cpu-page-source = Medido con el reloj del propio motor de CPU (WebAssembly, en la página): la media de los últimos { $steps } pasos de cada ejecución, desde su primera operación de entrenamiento hasta el paso del optimizador (zero_grad, pasadas hacia delante y hacia atrás, recorte, actualización), sin el gradiente de referencia del lote completo ni la evaluación en el conjunto de prueba que el Laboratorio añade para sus gráficas.
step-time-gpu-source = Medido con el reloj de la propia GPU (consultas de marcas de tiempo de WebGPU): la media de los últimos { $steps } pasos de cada ejecución, desde su primera operación de entrenamiento hasta el paso del optimizador, sin el gradiente de referencia del lote completo ni la evaluación en el conjunto de prueba que el Laboratorio añade para sus gráficas. Los navegadores redondean estas marcas (a 0,1 ms en Chromium), así que los pasos cortos se leen con poca precisión.
step-time-gpu-none = Este adaptador de GPU no ofrece consultas de marcas de tiempo, y el motor WebGPU envía juntos los trabajos de todas las ejecuciones, así que aquí no se puede cronometrar ninguna ejecución por separado. Abre el experimento con el motor de CPU (engine=cpu en la dirección) para medir cada ejecución.
step-time-bar = { $run }: { $ms } ms
step-time-pending = { $run }: aún sin medir
step-time-lesson = La memoria baja con el número de micro-lotes; el tiempo por paso del optimizador no: cada paso sigue pasando los B ejemplos hacia delante y hacia atrás, en más pasadas y más pequeñas (cada una con su propio coste fijo). La acumulación cambia tiempo por memoria, nunca al revés.
run-scaling-0 = lote completo
run-scaling-1 = acumular 4, pérdida / 4
run-scaling-2 = acumular 4, sin escalar
run-norms-0 = BatchNorm, lote completo
run-norms-1 = BatchNorm, acumular 4
run-norms-2 = LayerNorm, lote completo
run-norms-3 = LayerNorm, acumular 4
run-norms-4 = GroupNorm, lote completo
run-norms-5 = GroupNorm, acumular 4
run-variable_length-0 = lote completo
run-variable_length-1 = acumular 4, media de medias
run-variable_length-2 = acumular 4, / tokens totales
run-pitfalls-0 = acumulación correcta
run-pitfalls-1 = zero_grad olvidado
run-pitfalls-2 = zero_grad en cada microlote
run-pitfalls-3 = recorte en cada microlote
run-pitfalls-4 = planificador en cada microlote
run-pitfalls-5 = zero_grad olvidado, sin recorte
run-memory-0 = lote completo
run-memory-1 = acumular 4
run-memory-2 = acumular 16

## Incrustación
embed-open-full = Abrir en el laboratorio completo ↗

## Cuestionario
quiz-title = Cuestionario: acumulación de gradientes
quiz-intro = Solo tu primera respuesta a cada pregunta cuenta para la nota; repite cuantas veces quieras para aprender. El progreso se guarda en este navegador.
quiz-intro-lms = Solo tu primera respuesta a cada pregunta cuenta para la nota; repite cuantas veces quieras para aprender. El progreso se guarda en tu curso.
quiz-score-line = Nota al primer intento: { $correct } de { $answered } respondidas bien ({ $answered } de { $total } preguntas respondidas)
quiz-counter = Pregunta { $number } de { $total } · { $topic }
quiz-select-all = Marca todas las que correspondan.
quiz-your-answer = Tu respuesta
quiz-choose-first = Elige primero una opción.
quiz-verdict-chosen-right = ✓ Correcta, y la elegiste
quiz-verdict-missed = ✓ Correcta (no elegida)
quiz-verdict-chosen-wrong = ✗ Incorrecta, y la elegiste
quiz-verdict-wrong = ✗ Incorrecta
quiz-correct = ¡Correcto!
quiz-not-quite = No del todo.
quiz-see-in-lab = Verlo en el laboratorio
quiz-previous = Anterior
quiz-check = Comprobar respuesta
quiz-try-again = Intentar de nuevo
quiz-review-title = Lo que no acertaste a la primera, por tema
quiz-show-answer = Mostrar la respuesta
quiz-answer-hidden = Por ahora solo se explica tu elección: inténtalo de nuevo; la respuesta correcta aparece tras un segundo intento o cuando la pidas.
quiz-next = Siguiente pregunta
quiz-see-result = Ver tu resultado
quiz-question-link = Pregunta { $number }
quiz-passed = Has aprobado con un { $percent } % (nota mínima { $needed }).
quiz-name-label = Tu nombre, tal como debe aparecer en el certificado
quiz-get-certificate = Obtener mi certificado
quiz-not-passed = { $percent } %: la nota mínima es { $needed }. Repasa las preguntas que fallaste y empieza un nuevo intento.
quiz-new-attempt = Empezar un nuevo intento
quiz-result-title = Tu resultado
quiz-other-tab-new-attempt = Se empezó un nuevo intento en otra pestaña; esta página lo muestra ahora.
quiz-restore-kept = { $reason }. Se guardó en «{ $key }»; ha empezado un nuevo intento.
quiz-restore-lost = { $reason }. Ha empezado un nuevo intento.
quiz-restore-unreadable = no se pudo leer el progreso guardado del cuestionario: { $detail }
quiz-restore-other-version = el progreso guardado es de la versión { $saved } del banco de preguntas; esta es la versión { $current }
scorm-call-failed = La plataforma del curso no guardó tu progreso: { $call } falló ({ $detail }). Tus respuestas siguen en esta página y se enviarán de nuevo con tu próxima respuesta.
scorm-suspend-too-long = el progreso ocupa { $length } caracteres, más de los { $limit } que guarda esta plataforma; solo se conserva en esta página
scorm-suspend-unreadable = no se pudo leer el progreso guardado en el curso: { $detail }
quiz-error-no-question = no existe la pregunta { $index }
quiz-error-wrong-kind = esta respuesta no corresponde a la pregunta
quiz-error-no-option = la opción { $index } no existe
quiz-error-empty = elige al menos una opción
quiz-error-number = escribe un número
storage-blocked = el almacenamiento del navegador está bloqueado, así que el progreso no se guarda
storage-save-failed = no se pudo guardar el progreso (almacenamiento lleno o bloqueado)

## Certificado
cert-certifies = Se certifica que
cert-learned = Lo aprendido
cert-scan = Escanea para verificar este certificado
cert-issued-signed = Firmado por { $issuer } ({ $did }): una credencial Open Badges 3.0 que cualquiera puede verificar.
cert-issued-integrity = Emitido por Gradient Accumulation Lab en este navegador. Solo integridad: el ID prueba que el nombre, la puntuación y la fecha no se cambiaron, no quién lo emitió.
cert-score = Puntuación
cert-kicker = Certificado de aprovechamiento
cert-quiz-name = Cuestionario de Gradient Accumulation Lab
cert-passed-short = aprobado con un { $score } % el { $date } (versión del cuestionario { $version })
cert-passed = aprobó el cuestionario de Gradient Accumulation Lab con un { $score } % el { $date } (versión del cuestionario { $version })
cert-id-label = ID del certificado:
cert-share-label = Enlace para compartir
cert-open-verify = Abrir la página de verificación
cert-print = Imprimir
cert-download = Descargar PNG
cert-downloaded = PNG descargado.
cert-download-failed = No se pudo crear el PNG: { $reason }
cert-verify-hint = Verifica este ID en el laboratorio: Verificar un certificado
cert-stored-invalid = El certificado guardado no es válido: { $reason }
cert-none-title = Aún no tienes certificado
cert-none-text = Aprueba el cuestionario para conseguir uno.
cert-take-quiz = Hacer el cuestionario
cert-error-length = un ID de certificado tiene { $expected } caracteres (sin contar guiones); este tiene { $got }
cert-error-character = «{ $character }» en la posición { $position } no se usa en los ID de certificado
cert-error-check = los caracteres de control no coinciden: se escribió mal o se cambió un carácter
cert-error-format = este ID usa el formato { $format }, que esta versión de la aplicación no conoce
cert-error-score = el ID contiene una nota imposible del { $score } %
cert-error-future = la fecha del ID, { $date }, está en el futuro
cert-error-name-mismatch = el nombre no coincide con este certificado (o el ID se modificó)
cert-error-name = el nombre debe tener de 1 a { $max } caracteres
cert-error-date = la fecha debe estar entre 2025-01-01 y 2114
cert-error-issued = este ID nombra una credencial firmada por su emisor: compruébala con el emisor, no con un nombre
cert-error-issued-range = un ID emitido necesita un número de serie de 1 a { $max } y un nonce menor que { $limit }

## Verificación
verify-title = Verificar un certificado
verify-id-label = ID del certificado
verify-name-label = Nombre en el certificado
verify-button = Verificar
verify-valid-text = { $name } aprobó el cuestionario de Gradient Accumulation Lab (versión { $version }) con un { $score } % el { $date }.
verify-trust = Qué significan estas comprobaciones. Una credencial firmada (un ID de un emisor, o el archivo de un certificado) se comprueba aquí, en tu navegador: su firma Ed25519 (eddsa-jcs-2022) con la clave que su emisor publica en su propia dirección web (did:web), y su estado con la lista de revocación firmada del emisor. Una firma válida prueba que quien controla esa dirección la emitió a ese nombre con esa nota y que nada ha cambiado desde entonces; no prueba quién hizo el cuestionario, ni que alguien lo hiciera (las respuestas del cuestionario van dentro de la aplicación). Un ID solo de integridad (creado por la aplicación cuando no había emisor disponible) solo prueba la integridad: el nombre, la nota, la fecha y la versión del cuestionario son exactamente los de su creación, y se detecta cualquier errata o cambio. No prueba quién lo emitió: la aplicación sola no tiene servidor que guarde en secreto una clave de firma, así que cualquiera con el código de esta aplicación podría crear un ID válido.

## Credenciales firmadas (Open Badges 3.0): textos firmados en la credencial, reglas del nombre, verificación
badge-credential-name = Gradient Accumulation Lab: cuestionario aprobado
badge-credential-description = { $name } acertó al primer intento { $correct } de las { $total } preguntas del cuestionario de Gradient Accumulation Lab (versión { $version }): un { $score } %.
badge-achievement-name = Cuestionario de acumulación de gradientes, versión { $version }
badge-achievement-description = Aprobar el cuestionario de Gradient Accumulation Lab, un laboratorio interactivo que entrena una pequeña red neuronal para mostrar cuándo acumular gradientes en microlotes equivale a un lote grande y cuándo no: escalado de la pérdida, capas de normalización, microlotes de tamaño variable, recorte de gradientes y programación de la tasa de aprendizaje.
badge-criteria = Responder las { $total } preguntas del cuestionario (versión { $version }) y acertar al primer intento al menos el { $needed } %. Solo cuenta la primera respuesta a cada pregunta; el emisor corrige las respuestas por sí mismo.
badge-result-name = Proporción de preguntas acertadas al primer intento
badge-name-error-empty = el nombre está vacío
badge-name-error-too-long = el nombre tiene { $chars } caracteres; se admiten como máximo { $max }
badge-name-error-control = el nombre contiene el carácter de control U+{ $code }
badge-name-error-direction = el nombre contiene el control de dirección del texto U+{ $code }, que podría reordenar el texto que lo rodea
verify-error-malformed = esta no es una credencial Open Badge legible: falta su { $field } o está mal formado
verify-error-unknown-issuer = la credencial nombra al emisor { $issuer }, pero el documento DID recibido es el de { $did }
verify-error-unknown-key = la credencial se firmó con { $key }, que su emisor no declara como clave de firma
verify-error-unsigned = la credencial no tiene firma
verify-error-unsupported-proof = la firma de la credencial no es una prueba Data Integrity eddsa-jcs-2022 de una afirmación
verify-error-malformed-proof = la firma de la credencial está mal formada
verify-error-tampered = la firma no coincide con el contenido: la credencial se modificó después de firmarse
verify-error-status-mismatch = la lista de estado recibida es { $url }, pero el estado de la credencial se guarda en { $expected }
verify-error-status-invalid = la lista de estado no es una lista de revocación válida firmada por el emisor de la credencial
verify-error-status-index = el índice de estado { $index } de la credencial está fuera de su lista de estado

## Certificados firmados: la petición al emisor, la tarjeta del certificado, la página de verificación
issue-busy = Pidiendo al emisor de certificados que corrija tus respuestas y firme tu certificado…
issue-unreachable = No se pudo contactar con el emisor de certificados ({ $reason }). Tus respuestas están guardadas.
issue-try-again = Intentar de nuevo
issue-integrity-only = Obtener en su lugar un certificado solo de integridad
issue-not-passed = El emisor ha corregido tus respuestas y no llegan al aprobado ({ $percent } %), así que no ha firmado ningún certificado. Solo cuenta la primera respuesta a cada pregunta.
issue-not-passed-no-score = El emisor ha corregido tus respuestas y no llegan al aprobado, así que no ha firmado ningún certificado. Solo cuenta la primera respuesta a cada pregunta.
issue-refused = El emisor rechazó la petición: { $detail }
issue-rate-limited = El emisor ha recibido demasiadas peticiones desde esta dirección. Espera { $seconds } s y vuelve a intentarlo.
issue-rate-limited-later = El emisor ha recibido demasiadas peticiones desde esta dirección. Espera un minuto y vuelve a intentarlo.
cert-stored-kept = No se pudo leer el certificado guardado en este navegador ({ $reason }); se conservó en «{ $key }» y no se borró nada.
cert-stored-unreadable = No se pudo leer el certificado guardado en este navegador (en «{ $key }»): { $reason }
cert-signed = Credencial firmada (Open Badges 3.0)
cert-signed-by = Firmado por { $issuer }:
cert-integrity-only = Solo de integridad: ningún emisor ha firmado este certificado. Su ID prueba que el nombre, la nota y la fecha no se cambiaron, pero no quién lo emitió.
cert-download-json = Descargar la credencial (JSON)
cert-json-downloaded = Credencial descargada.
cert-baked-note = El PNG lleva dentro la credencial firmada, así que la imagen sola basta para verificarlo.
verify-name-hint = Solo hace falta para los ID solo de integridad (creados por la aplicación sin emisor).
verify-file-label = O comprueba un archivo: el PNG de un certificado o una credencial (JSON)
verify-file-hint = Elige un archivo o suéltalo aquí.
verify-checking = Comprobando…
verify-checked-id = Comprobado: ID de certificado { $id }
verify-checked-file = Comprobado: el archivo { $file }
verify-status-valid = Válido: firmado por su emisor
verify-status-revoked = Revocado por su emisor
verify-status-tampered = No válido: modificado después de firmarse
verify-status-unknown-issuer = Emisor desconocido
verify-status-unknown-id = ID de certificado desconocido
verify-status-unreachable = No se pudo contactar con el emisor
verify-status-integrity-only = ID válido (solo de integridad)
verify-status-invalid = No válido
verify-checked-signature = Firma: { $suite }, hecha con la clave del emisor { $key }; coincide con el contenido.
verify-checked-issuer = Emitido por { $issuer } ({ $did })
verify-checked-active = Estado: no revocado (comprobado ahora mismo con la lista de estado firmada del emisor).
verify-checked-revoked = Estado: revocado (la lista de estado firmada del emisor lo marca).
verify-checked-status-unknown = Estado: desconocido (no se pudo obtener la lista de estado del emisor).
verify-integrity-only-note = Solo de integridad: cualquiera podría crear este ID; prueba que el nombre, la nota y la fecha no se cambiaron.
verify-reason-unknown-id = el emisor no tiene ninguna credencial con este ID (revisa si tiene erratas)
verify-reason-unreachable = no se pudo contactar con el emisor de certificados ({ $reason }), así que no se ha comprobado nada
verify-reason-did = no se pudo resolver el emisor { $did }: { $reason }
verify-reason-status-unreachable = la firma es válida, pero no se pudo obtener la lista de estado del emisor ({ $reason }), así que no se sabe si la credencial fue revocada
verify-reason-revoked = el emisor ha retirado esta credencial; ya no certifica nada
verify-file-not-baked = este PNG no lleva ninguna credencial (no tiene el fragmento openbadgecredential): muestra un certificado, pero no puede probarlo
verify-file-unreadable = no se pudo leer el archivo: { $reason }
verify-file-not-credential = este archivo no es ni una credencial (JSON) ni el PNG de un certificado

## Página de rendimiento
bench-title = Rendimiento
bench-intro = La carga de trabajo canónica en el motor de CPU (wasm) y en WebGPU. Las cifras aparecen abajo al terminar.
bench-running = midiendo…

## Dentro de un paso del optimizador (vista paso a paso)
step-title = Dentro de un paso del optimizador
step-intro = Reproduce un paso del optimizador fase a fase: el forward, la pérdida y el backward de cada micro-lote, el búfer de gradientes que se llena y después la actualización. Cada número viene del motor que entrena.
step-open = Mirar dentro del siguiente paso del optimizador
step-open-short = Dentro de un paso
step-close = Cerrar la vista paso a paso
step-controls = Fases del paso del optimizador
step-previous = Fase anterior
step-next = Fase siguiente
step-play = Reproducir las fases despacio
step-play-stop = Detener la reproducción de fases
step-next-step = Siguiente paso del optimizador
step-waiting = Dando un paso con trazas…
step-of-step = Paso del optimizador { $step }.
step-announce = Fase { $phase } de { $phases }:
step-phase-forward = micro-lote { $k }, forward (sus activaciones quedan en memoria).
step-phase-loss = micro-lote { $k }, pérdida (ponderada antes del backward).
step-phase-backward = micro-lote { $k }, backward (activaciones liberadas, su gradiente se suma al búfer).
step-phase-clip = recorte del gradiente acumulado.
step-phase-optimizer = paso del optimizador (los parámetros se mueven).
step-phase-zero-grad = zero_grad (el búfer se vacía para el siguiente paso).
step-activity-forward = forward
step-activity-loss = pérdida
step-activity-backward = backward
step-activity-waiting = esperando
step-activity-clip = recortando
step-activity-optimizer = paso del optimizador
step-activity-zero-grad = zero_grad
step-accumulated = { $k } de { $n }
step-accumulated-stale = { $k } de { $n } + pasos anteriores
step-table-caption = El búfer de gradientes de cada ejecución en esta fase, frente al gradiente del lote completo con los mismos pesos
step-col-doing = haciendo
step-col-accumulated = micro-lotes en el búfer
step-col-weight = peso de la pérdida
step-col-ratio = ‖búfer‖ / ‖lote completo‖
step-col-error = error relativo
step-col-cosine = coseno
step-col-memory = activaciones en memoria
step-weight-full = media sobre { $items } elementos
step-weight-mean-over-n = media sobre { $items } elementos ÷ { $n }
step-weight-unscaled = media sobre { $items } elementos (sin ÷ { $n })
step-weight-total = suma sobre { $items } elementos ÷ { $total }
step-code-label = El bucle de entrenamiento de la ejecución en PyTorch, con la línea que se ejecuta marcada
step-run-label = Código y gradiente de
step-heatmap-accumulated = Gradiente de los pesos de la primera capa en el búfer (primeras 16 unidades; rojo positivo, azul negativo; el 10 % mayor a todo color)
step-heatmap-full = El gradiente del lote completo de los mismos pesos, en la misma escala de color
step-memory-label = Memoria de activaciones de cada ejecución a lo largo de las fases de este paso; el pico más alto ocupa { $bytes }
step-memory-caption = Memoria de activaciones a lo largo del paso (pico más alto { $bytes }): la acumulación guarda un micro-lote cada vez.
step-bn-caption = Estadísticas de BatchNorm de la primera capa: micro-lote { $k } frente al lote completo
step-bn-region = Estadísticas de BatchNorm
step-bn-channel = canal
step-bn-micro-mean = media del micro-lote
step-bn-batch-mean = media del lote
step-bn-micro-variance = varianza del micro-lote
step-bn-batch-variance = varianza del lote
code-zero-grad-in-loop = mal: vacía el búfer antes de cada micro-lote
code-loss-over-n = escalada para que los N micro-lotes sumen la media del lote
code-loss-unscaled = sin dividir por N: el gradiente sale N veces mayor
code-loss-total = suma de las pérdidas ÷ los elementos de todo el paso
code-backward-adds = suma en .grad; todavía no se aplica nada
code-clip-in-loop = mal: recorta cada suma parcial, no el gradiente entero
code-scheduler-in-loop = mal: el calendario avanza N veces por actualización
code-zero-grad-forgotten = falta: los gradientes de pasos anteriores se siguen sumando

## Vistas enlazadas: la cruz de una gráfica y el deslizador del historial
chart-inspect-step = Paso { $step }
results-title-inspected = Tras el paso { $step } (inspeccionando un paso anterior; el entrenamiento va por el paso { $live })
scrubber-label = Inspeccionar un paso anterior
scrubber-value = paso { $step } de { $live }
scrubber-live = mostrando el paso en curso
scrubber-at = mostrando el paso { $step }
scrubber-back-to-live = Volver al paso en curso
boundaries-snapshot = Inspeccionando el paso { $step }: las fronteras dibujadas tras el paso { $kept }, la anterior más cercana de { $count } instantáneas guardadas ({ $bytes } en memoria; se guardan 24 como mucho, repartidas por la ejecución).

## Los presets como un curso: predecir y observar; el recorrido guiado
course-strip = Experimento { $position } de { $total }
course-strip-label = Los experimentos del curso
course-observed = (observado)
course-next = Siguiente experimento: { $title }
course-next-hint = Entrena al menos { $steps } pasos para observar este experimento; después se abre el siguiente.
course-summary-title = Has hecho todos los experimentos
course-summary-title-partial = El final del curso ({ $observed } de { $total } experimentos observados)
course-summary = Acumular N micro-lotes da el gradiente del lote completo cuando cada pérdida se escala por 1/N (o se divide por el total de elementos del paso cuando los micro-lotes tienen tamaños distintos), con la memoria de activaciones de un solo micro-lote; sin escalar, el gradiente es N veces mayor; las estadísticas de BatchNorm no se acumulan; zero_grad, el recorte y el planificador pertenecen al paso del optimizador, no a cada micro-lote.
course-to-quiz = Hacer el cuestionario
predict-title = Primero, predice
predict-lock = Fijar mi predicción
predict-locked = Tu predicción: { $choice }
predict-wait = Entrena { $steps } pasos para ver qué mide tu ejecución.
predict-right = Correcto.
predict-wrong = No exactamente: la respuesta es { $answer }.
predict-quiz = Responde la pregunta del cuestionario sobre esto.
predict-scaling-question = La ejecución sin escalar suma los gradientes de 4 micro-lotes sin dividir por 4. Su gradiente será … el del lote completo.
predict-scaling-choice-0 = igual que
predict-scaling-choice-1 = 4 veces
predict-scaling-choice-2 = la cuarta parte de
predict-scaling-choice-3 = 16 veces
predict-scaling-why = La pérdida media de cada micro-lote tiene la escala del lote completo; sumar 4 sin dividir por 4 da 4 veces el gradiente del lote completo.
predict-scaling-measured = Tu ejecución midió el gradiente sin escalar en { $ratio } veces el del lote completo.
predict-scaling_adam-question = Con Adam, el gradiente de la ejecución sin escalar sigue siendo 4 veces mayor. Su pérdida de entrenamiento …
predict-scaling_adam-choice-0 = se mantendrá cerca de la del lote completo
predict-scaling_adam-choice-1 = oscilará como con SGD
predict-scaling_adam-choice-2 = bajará 4 veces más rápido
predict-scaling_adam-why = Adam divide cada actualización por una estimación del tamaño del gradiente, así que un factor constante de 4 casi se cancela (solo épsilon lo nota).
predict-scaling_adam-measured = En tu ejecución la pérdida de entrenamiento es { $unscaled } sin escalar frente a { $full } con el lote completo.
predict-norms-question = Acumulando 4 micro-lotes, ¿qué normalización NO dará el gradiente del lote completo?
predict-norms-choice-0 = BatchNorm
predict-norms-choice-1 = LayerNorm
predict-norms-choice-2 = GroupNorm
predict-norms-why = BatchNorm normaliza con estadísticas de los elementos de cada micro-lote, no del lote entero; LayerNorm y GroupNorm normalizan cada elemento por separado, así que la acumulación coincide.
predict-norms-measured = Tu ejecución: BatchNorm acumulado se desvía del gradiente del lote completo en { $batch }, LayerNorm en { $layer }.
predict-variable_length-question = Las secuencias tienen longitudes distintas, así que los micro-lotes tienen distinto número de tokens. ¿Qué pérdida da el gradiente del lote completo?
predict-variable_length-choice-0 = la media de las medias de cada micro-lote, dividida por N
predict-variable_length-choice-1 = la suma de las pérdidas de los tokens de cada micro-lote dividida por el total de tokens del paso
predict-variable_length-choice-2 = las dos, son lo mismo
predict-variable_length-why = Una media de medias pesa más los tokens de los micro-lotes pequeños; dividir cada suma por el total de tokens pesa igual cada token, como el lote completo.
predict-variable_length-measured = Tu ejecución: la media de medias se desvía en { $means }, dividir por el total de tokens en { $total }.
predict-pitfalls-question = Si se olvida zero_grad (y nada recorta), la norma del gradiente a lo largo de los pasos …
predict-pitfalls-choice-0 = se mantendrá más o menos igual
predict-pitfalls-choice-1 = crecerá paso a paso
predict-pitfalls-choice-2 = caerá a cero
predict-pitfalls-why = Sin zero_grad el gradiente de cada paso se suma a todos los anteriores que siguen en .grad, así que el gradiente aplicado no deja de crecer.
predict-pitfalls-measured = Tu ejecución: la norma del gradiente con zero_grad olvidado pasó de { $first } en el paso 1 a { $last } en el paso { $steps }.
predict-memory-question = Con N = 4 micro-lotes, la memoria máxima de activaciones será … de la del lote completo.
predict-memory-choice-0 = igual que
predict-memory-choice-1 = la cuarta parte
predict-memory-choice-2 = 4 veces
predict-memory-why = Las activaciones se guardan solo desde el forward de un micro-lote hasta su backward, así que el pico guarda un micro-lote: la cuarta parte de los elementos.
predict-memory-measured = Aquí: { $four } con 4 micro-lotes frente a { $full } con el lote completo, { $ratio } de ella.
course-unreadable = No se pudo leer tu progreso guardado del curso; se conserva aparte en { $key } y el curso empieza de nuevo.
step-data-caption = Los { $total } elementos del paso; en color los { $items } del micro-lote { $k } (los que ven su forward y su backward).
step-data-caption-none = Los { $total } elementos del paso.
