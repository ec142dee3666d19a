"""tfd.nn.rnn_cell's cells and tfd.nn.dynamic_rnn / static_rnn (TF1's):
each cell's step and whole runs against float64 numpy with the same
weights, batch- and time-major, with sequence_length and with a time
dimension known only at run time; static_rnn against dynamic_rnn; the
gradient through the loop against finite differences; TF1's variable
names; an LSTM that learns a small task; the arguments refused."""
import numpy as np
import pytest

import tfd
from numeric_helpers import numeric_gradient

rnn_cell = tfd.nn.rnn_cell
RNG = np.random.RandomState(7)


# float64 references ------------------------------------------------------------
def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def np_basic_rnn(w, x, h):
    h = np.tanh(np.concatenate([x, h], 1) @ w["kernel"] + w["bias"])
    return h, h


def np_gru(w, x, h):
    r, u = np.split(sigmoid(np.concatenate([x, h], 1) @ w["gates/kernel"] + w["gates/bias"]),
                    2, axis=1)
    c = np.tanh(np.concatenate([x, r * h], 1) @ w["candidate/kernel"] + w["candidate/bias"])
    h = u * h + (1 - u) * c
    return h, h


def np_lstm(w, x, state, forget_bias=1.0, cell_clip=None, proj_clip=None):
    """TF1's LSTMCell (BasicLSTMCell without the options); state (c, h)."""
    c, h = state
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ w["kernel"] + w["bias"], 4, axis=1)
    f = f + forget_bias
    if "w_f_diag" in w:
        f, i = f + w["w_f_diag"] * c, i + w["w_i_diag"] * c
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(j)
    if cell_clip is not None:
        c = np.clip(c, -cell_clip, cell_clip)
    if "w_o_diag" in w:
        o = o + w["w_o_diag"] * c
    h = sigmoid(o) * np.tanh(c)
    if "projection/kernel" in w:
        h = h @ w["projection/kernel"]
        if proj_clip is not None:
            h = np.clip(h, -proj_clip, proj_clip)
    return h, (c, h)


def np_run(step, xs_tm, state, lengths=None):
    """A cell's step over [time, batch, depth]: outputs [time, batch, n] and
    the final state; rows past their length output zeros and keep their state."""
    outputs = []
    for t, x in enumerate(xs_tm):
        out, new = step(x, state)
        if lengths is not None:
            ended = (np.asarray(lengths) <= t)[:, None]
            out = np.where(ended, 0.0, out)
            new = tuple(np.where(ended, a, b) for a, b in zip(state, new)) \
                if isinstance(new, tuple) else np.where(ended, state, new)
        outputs.append(out)
        state = new
    return np.stack(outputs), state


def weights(sess, cell):
    """The cell's variables' values by their names in its scope."""
    prefix = cell.scope_name + "/"
    return {v.name[len(prefix):-2]: sess.run(v) for v in cell.variables}


def names(variables):
    return [v.name for v in variables]


def f64(*shape):
    return RNG.randn(*shape)


# One step of each cell ---------------------------------------------------------
def test_basic_rnn_and_gru_cells_one_step():
    x = tfd.placeholder(tfd.float64, [None, 3])
    h = tfd.placeholder(tfd.float64, [None, 4])
    basic, gru = rnn_cell.BasicRNNCell(4), rnn_cell.GRUCell(4)
    basic_out, basic_state = basic(x, h)
    gru_out, gru_state = gru(x, h)
    assert basic.state_size == basic.output_size == gru.state_size == gru.output_size == 4
    assert names(tfd.global_variables()) == [
        "basic_rnn_cell/kernel:0", "basic_rnn_cell/bias:0",
        "gru_cell/gates/kernel:0", "gru_cell/gates/bias:0",
        "gru_cell/candidate/kernel:0", "gru_cell/candidate/bias:0"]
    assert basic_out.shape.dims == [None, 4] and gru_out.shape.dims == [None, 4]
    xs, hs = f64(2, 3), f64(2, 4)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        got = sess.run([basic_out, basic_state, gru_out, gru_state], {x: xs, h: hs})
        wb, wg = weights(sess, basic), weights(sess, gru)
    np.testing.assert_array_equal(wg["gates/bias"], np.ones(8))  # TF1's default
    np.testing.assert_array_equal(wg["candidate/bias"], np.zeros(4))
    for g, want in zip(got, np_basic_rnn(wb, xs, hs) + np_gru(wg, xs, hs)):
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("state_is_tuple", [True, False])
def test_basic_lstm_cell_one_step(state_is_tuple):
    x = tfd.placeholder(tfd.float64, [None, 3])
    c, h = tfd.placeholder(tfd.float64, [None, 5]), tfd.placeholder(tfd.float64, [None, 5])
    cell = rnn_cell.BasicLSTMCell(5, forget_bias=0.5, state_is_tuple=state_is_tuple)
    state = rnn_cell.LSTMStateTuple(c, h) if state_is_tuple else tfd.concat([c, h], 1)
    out, new_state = cell(x, state)
    assert cell.output_size == 5
    if state_is_tuple:
        assert cell.state_size == (5, 5) and isinstance(new_state, rnn_cell.LSTMStateTuple)
        assert new_state.dtype == tfd.float64
    else:
        assert cell.state_size == 10 and new_state.shape.dims == [None, 10]
    assert names(cell.variables) == ["basic_lstm_cell/kernel:0", "basic_lstm_cell/bias:0"]
    assert cell.variables[0].shape.dims == [8, 20]
    xs, cs, hs = f64(2, 3), f64(2, 5), f64(2, 5)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        got_out, got_state = sess.run([out, new_state], {x: xs, c: cs, h: hs})
        w = weights(sess, cell)
    want_out, want_state = np_lstm(w, xs, (cs, hs), forget_bias=0.5)
    np.testing.assert_allclose(got_out, want_out, rtol=1e-12, atol=1e-12)
    got_state = got_state if state_is_tuple else np.split(got_state, 2, axis=1)
    np.testing.assert_allclose(got_state[0], want_state[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_state[1], want_state[1], rtol=1e-12, atol=1e-12)


def test_lstm_cell_with_peepholes_clipping_and_projection():
    x = tfd.placeholder(tfd.float64, [None, 3])
    c, h = tfd.placeholder(tfd.float64, [None, 4]), tfd.placeholder(tfd.float64, [None, 2])
    cell = rnn_cell.LSTMCell(4, use_peepholes=True, cell_clip=0.3, num_proj=2, proj_clip=0.1,
                             initializer=tfd.random_uniform_initializer(-1.0, 1.0, seed=3))
    assert cell.state_size == (4, 2) and cell.output_size == 2
    out, state = cell(x, rnn_cell.LSTMStateTuple(c, h))
    assert names(cell.variables) == [
        "lstm_cell/kernel:0", "lstm_cell/bias:0", "lstm_cell/w_f_diag:0", "lstm_cell/w_i_diag:0",
        "lstm_cell/w_o_diag:0", "lstm_cell/projection/kernel:0"]
    assert cell.variables[0].shape.dims == [5, 16]
    xs, cs, hs = 3 * f64(2, 3), f64(2, 4), f64(2, 2)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        got_out, got_state = sess.run([out, state], {x: xs, c: cs, h: hs})
        w = weights(sess, cell)
    want_out, want_state = np_lstm(w, xs, (cs, hs), cell_clip=0.3, proj_clip=0.1)
    assert np.abs(got_state.c).max() <= 0.3 and np.abs(got_out).max() <= 0.1
    np.testing.assert_allclose(got_out, want_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_state.c, want_state[0], rtol=1e-12, atol=1e-12)


def test_zero_state_and_a_cell_called_at_every_step_shares_its_weights():
    cell = rnn_cell.LSTMCell(3)
    fixed = cell.zero_state(4, tfd.float32)
    x = tfd.placeholder(tfd.float32, [None, 2])
    fed = cell.zero_state(tfd.shape(x)[0], tfd.float32)
    assert isinstance(fixed, rnn_cell.LSTMStateTuple) and fixed.c.shape.dims == [4, 3]
    assert fed.h.shape.dims == [None, 3]
    state = fed
    for _ in range(3):
        _, state = cell(x, state)
    assert names(tfd.global_variables()) == ["lstm_cell/kernel:0", "lstm_cell/bias:0"]
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        got = sess.run(fed, {x: np.ones((5, 2), np.float32)})
    assert got.c.shape == (5, 3) and not got.c.any() and not got.h.any()


# dynamic_rnn and static_rnn --------------------------------------------------------
@pytest.mark.parametrize("time_major", [False, True])
def test_dynamic_rnn_runs_the_cell_over_time(time_major):
    shape = [4, 2, 3] if time_major else [2, 4, 3]
    x = tfd.placeholder(tfd.float64, shape)
    cell = rnn_cell.GRUCell(5)
    outputs, state = tfd.nn.dynamic_rnn(cell, x, dtype=tfd.float64, time_major=time_major)
    assert outputs.shape.dims == shape[:2] + [5] and state.shape.dims == [2, 5]
    assert names(tfd.global_variables())[0] == "rnn/gru_cell/gates/kernel:0"
    xs = f64(*shape)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        got_outputs, got_state = sess.run([outputs, state], {x: xs})
        w = weights(sess, cell)
    xs_tm = xs if time_major else xs.transpose(1, 0, 2)
    want_tm, want_state = np_run(lambda x_t, s: np_gru(w, x_t, s), xs_tm, np.zeros((2, 5)))
    want = want_tm if time_major else want_tm.transpose(1, 0, 2)
    np.testing.assert_allclose(got_outputs, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_state, want_state, rtol=1e-12, atol=1e-12)


def test_dynamic_rnn_with_sequence_length_and_time_fed_at_run_time():
    x = tfd.placeholder(tfd.float64, [None, None, 2])
    lengths = tfd.placeholder(tfd.int64, [None])
    cell = rnn_cell.BasicLSTMCell(3)
    h0 = tfd.placeholder(tfd.float64, [None, 3])
    init = rnn_cell.LSTMStateTuple(tfd.zeros_like(h0), h0)
    outputs, state = tfd.nn.dynamic_rnn(cell, x, sequence_length=lengths, initial_state=init)
    assert outputs.shape.dims == [None, None, 3] and state.h.shape.dims == [None, 3]
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        w = weights(sess, cell)
        for batch, time, lens in ((3, 4, [4, 2, 0]), (2, 6, [1, 6]), (1, 2, [2])):
            xs, hs = f64(batch, time, 2), f64(batch, 3)
            got_outputs, got_state = sess.run([outputs, state],
                                              {x: xs, lengths: lens, h0: hs})
            want_tm, want_state = np_run(lambda x_t, s: np_lstm(w, x_t, s),
                                         xs.transpose(1, 0, 2), (np.zeros_like(hs), hs), lens)
            assert got_outputs.shape == (batch, time, 3)
            for row, n in enumerate(lens):
                assert not got_outputs[row, n:].any()  # zeros past the end
            np.testing.assert_allclose(got_outputs, want_tm.transpose(1, 0, 2), rtol=1e-12,
                                       atol=1e-12)
            np.testing.assert_allclose(got_state.c, want_state[0], rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(got_state.h, want_state[1], rtol=1e-12, atol=1e-12)
            for row, n in enumerate(lens):
                if n == 0:  # no step: the initial state
                    np.testing.assert_array_equal(got_state.h[row], hs[row])


def test_static_rnn_equals_dynamic_rnn_with_the_same_weights():
    x = tfd.placeholder(tfd.float64, [2, 3, 4])
    lengths = tfd.constant([3, 1])
    cell = rnn_cell.LSTMCell(3, use_peepholes=True)
    dyn_outputs, dyn_state = tfd.nn.dynamic_rnn(cell, x, sequence_length=lengths,
                                                dtype=tfd.float64)
    static_outputs, static_state = tfd.nn.static_rnn(cell, tfd.unstack(x, axis=1),
                                                     sequence_length=lengths,
                                                     dtype=tfd.float64, scope="unrolled")
    assert len(static_outputs) == 3 and static_outputs[0].shape.dims == [2, 3]
    assert len(tfd.global_variables()) == 5  # the cell's, made once
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        feed = {x: f64(2, 3, 4)}
        dyn, stat = sess.run([(dyn_outputs, dyn_state), (static_outputs, static_state)], feed)
    np.testing.assert_allclose(dyn[0], np.stack(stat[0], axis=1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dyn[1].c, stat[1].c, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dyn[1].h, stat[1].h, rtol=1e-12, atol=1e-12)


def test_gradients_through_dynamic_rnn_match_finite_differences():
    x = tfd.placeholder(tfd.float64, [2, 3, 2])
    cell = rnn_cell.BasicLSTMCell(2)
    lengths = [3, 2]
    outputs, state = tfd.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tfd.float64)
    target = f64(2, 3, 2)
    loss = tfd.reduce_sum(outputs * target) + tfd.reduce_sum(state.c * state.c)
    xs = f64(2, 3, 2)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        kernel, x_grad = tfd.gradients(loss, [cell.variables[0], x])
        w = weights(sess, cell)
        got_kernel, got_x = sess.run([kernel, x_grad], {x: xs})

    def np_loss(kernel_value, xs_value):
        ws = dict(w, kernel=kernel_value)
        out, (c, _) = np_run(lambda x_t, s: np_lstm(ws, x_t, s), xs_value.transpose(1, 0, 2),
                             (np.zeros((2, 2)), np.zeros((2, 2))), lengths)
        return np.sum(out.transpose(1, 0, 2) * target) + np.sum(c * c)

    np.testing.assert_allclose(got_kernel, numeric_gradient(lambda k: np_loss(k, xs),
                                                            w["kernel"]), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got_x, numeric_gradient(lambda v: np_loss(w["kernel"], v), xs),
                               rtol=1e-6, atol=1e-8)


def test_multi_rnn_cell_of_two_lstms():
    x = tfd.placeholder(tfd.float64, [None, 3, 2])
    cells = [rnn_cell.LSTMCell(4), rnn_cell.LSTMCell(3)]
    stack = rnn_cell.MultiRNNCell(cells)
    assert stack.state_size == ((4, 4), (3, 3)) and stack.output_size == 3
    outputs, state = tfd.nn.dynamic_rnn(stack, x, dtype=tfd.float64)
    assert names(tfd.global_variables()) == [
        "rnn/multi_rnn_cell/cell_0/lstm_cell/kernel:0",
        "rnn/multi_rnn_cell/cell_0/lstm_cell/bias:0",
        "rnn/multi_rnn_cell/cell_1/lstm_cell/kernel:0",
        "rnn/multi_rnn_cell/cell_1/lstm_cell/bias:0"]
    assert names(stack.trainable_variables) == names(tfd.global_variables())
    assert len(state) == 2 and state[1].h.shape.dims == [None, 3]
    xs = f64(2, 3, 2)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        got_outputs, got_state = sess.run([outputs, state], {x: xs})
        w0, w1 = weights(sess, cells[0]), weights(sess, cells[1])

    def step(x_t, s):
        out0, s0 = np_lstm(w0, x_t, s[0:2])
        out1, s1 = np_lstm(w1, out0, s[2:4])
        return out1, s0 + s1

    zero = (np.zeros((2, 4)),) * 2 + (np.zeros((2, 3)),) * 2
    want_tm, want_state = np_run(step, xs.transpose(1, 0, 2), zero)
    np.testing.assert_allclose(got_outputs, want_tm.transpose(1, 0, 2), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_state[1].c, want_state[2], rtol=1e-12, atol=1e-12)


def test_variable_names_are_tf1s():
    x = tfd.placeholder(tfd.float32, [None, 2, 3])
    made = {}
    for cls, scope in ((rnn_cell.BasicLSTMCell, None), (rnn_cell.BasicRNNCell, "basic"),
                       (rnn_cell.GRUCell, "gru"), (rnn_cell.LSTMCell, "encoder")):
        before = len(tfd.global_variables())
        tfd.nn.dynamic_rnn(cls(2), x, dtype=tfd.float32, scope=scope)
        made[cls] = names(tfd.global_variables()[before:])
    assert made[rnn_cell.BasicLSTMCell] == ["rnn/basic_lstm_cell/kernel:0",
                                            "rnn/basic_lstm_cell/bias:0"]
    assert made[rnn_cell.BasicRNNCell] == ["basic/basic_rnn_cell/kernel:0",
                                           "basic/basic_rnn_cell/bias:0"]
    assert made[rnn_cell.GRUCell] == ["gru/gru_cell/gates/kernel:0", "gru/gru_cell/gates/bias:0",
                                      "gru/gru_cell/candidate/kernel:0",
                                      "gru/gru_cell/candidate/bias:0"]
    assert made[rnn_cell.LSTMCell] == ["encoder/lstm_cell/kernel:0", "encoder/lstm_cell/bias:0"]
    with tfd.variable_scope("decoder"):
        tfd.nn.static_rnn(rnn_cell.LSTMCell(2, name="dec"), tfd.unstack(x, axis=1),
                          dtype=tfd.float32)
    assert names(tfd.global_variables()[-2:]) == ["decoder/rnn/dec/kernel:0",
                                                  "decoder/rnn/dec/bias:0"]
    assert tfd.contrib.rnn.BasicLSTMCell is rnn_cell.BasicLSTMCell
    assert tfd.contrib.rnn.LSTMStateTuple is rnn_cell.LSTMStateTuple
    assert tfd.contrib.layers.l2_regularizer is not None  # the one contrib, extended


def test_an_lstm_learns_the_sum_of_a_sequence():
    tfd.set_random_seed(1)
    x = tfd.placeholder(tfd.float32, [None, None, 1])
    y = tfd.placeholder(tfd.float32, [None, 1])
    _, state = tfd.nn.dynamic_rnn(rnn_cell.LSTMCell(8), x, dtype=tfd.float32)
    prediction = tfd.layers.dense(state.h, 1)
    loss = tfd.reduce_mean(tfd.square(prediction - y))
    train = tfd.train.AdamOptimizer(0.05).minimize(loss)
    rng = np.random.RandomState(0)
    xs = rng.uniform(-0.5, 0.5, (32, 5, 1)).astype(np.float32)
    feed = {x: xs, y: xs.sum(axis=1)}
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        first = sess.run(loss, feed)
        for _ in range(60):
            sess.run(train, feed)
        last = sess.run(loss, feed)
    assert last < 0.1 * first, (first, last)


def test_what_is_refused_is_named():
    with pytest.raises(TypeError, match="num_unit_shards"):
        rnn_cell.LSTMCell(4, num_unit_shards=2)
    with pytest.raises(ValueError, match="proj_clip"):
        rnn_cell.LSTMCell(4, proj_clip=1.0)
    with pytest.raises(ValueError, match="activation"):
        rnn_cell.GRUCell(4, activation="no_such_function")
    x = tfd.placeholder(tfd.float32, [None, 3, 2])
    with pytest.raises(ValueError, match="dtype"):
        tfd.nn.dynamic_rnn(rnn_cell.GRUCell(2), x)
    with pytest.raises(ValueError, match=r"\[batch, time, depth\]"):
        tfd.nn.dynamic_rnn(rnn_cell.GRUCell(2), x[:, 0], dtype=tfd.float32)
    with pytest.raises(TypeError, match="list of tensors"):
        tfd.nn.static_rnn(rnn_cell.GRUCell(2), x, dtype=tfd.float32)
    with pytest.raises(TypeError, match="not an RNN cell"):
        tfd.nn.dynamic_rnn(tfd.layers.Dense(2), x, dtype=tfd.float32)
    cell = rnn_cell.BasicRNNCell(2)
    cell(x[:, 0], cell.zero_state(1, tfd.float32))
    with pytest.raises(ValueError, match="built for inputs of depth 2"):
        cell(tfd.placeholder(tfd.float32, [None, 5]), cell.zero_state(1, tfd.float32))


def np_reversed(xs_tm, lengths):
    """Each row's first lengths[b] steps reversed in time, the rest kept."""
    out = xs_tm.copy()
    for b, n in enumerate(lengths):
        out[:n, b] = xs_tm[:n, b][::-1]
    return out


def test_bidirectional_dynamic_rnn_runs_the_backward_cell_over_each_row_reversed():
    x = tfd.placeholder(tfd.float64, [None, None, 2])
    lengths = tfd.placeholder(tfd.int32, [None])
    fw, bw = rnn_cell.GRUCell(3), rnn_cell.BasicRNNCell(2)
    (out_fw, out_bw), (state_fw, state_bw) = tfd.nn.bidirectional_dynamic_rnn(
        fw, bw, x, sequence_length=lengths, dtype=tfd.float64)
    assert out_fw.shape.dims == [None, None, 3] and out_bw.shape.dims == [None, None, 2]
    assert {n.rsplit("/", 1)[0] for n in names(tfd.global_variables())} == {
        "bidirectional_rnn/fw/gru_cell/gates", "bidirectional_rnn/fw/gru_cell/candidate",
        "bidirectional_rnn/bw/basic_rnn_cell"}
    (grad,) = tfd.gradients(tfd.reduce_sum(out_bw * out_bw), [x])
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        w_fw, w_bw = weights(sess, fw), weights(sess, bw)
        for lens in ([4, 1, 0], [4, 4, 3]):
            xs = f64(3, 4, 2)
            got = sess.run([out_fw, out_bw, state_fw, state_bw], {x: xs, lengths: lens})
            xs_tm = xs.transpose(1, 0, 2)
            want_fw, want_state_fw = np_run(lambda x_t, s: np_gru(w_fw, x_t, s), xs_tm,
                                            np.zeros((3, 3)), lens)
            rev_bw, want_state_bw = np_run(lambda x_t, s: np_basic_rnn(w_bw, x_t, s),
                                           np_reversed(xs_tm, lens), np.zeros((3, 2)), lens)
            for g, want in zip(got, (want_fw.transpose(1, 0, 2),
                                     np_reversed(rev_bw, lens).transpose(1, 0, 2),
                                     want_state_fw, want_state_bw)):
                np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-12)
        xs, lens = f64(3, 4, 2), [3, 4, 1]
        got_grad = sess.run(grad, {x: xs, lengths: lens})
        want_grad = numeric_gradient(
            lambda v: np.square(sess.run(out_bw, {x: v, lengths: lens})), xs)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-6, atol=1e-8)


def test_cell_wrappers_drop_add_and_place_around_the_cell_they_wrap():
    x = tfd.placeholder(tfd.float64, [2, 3])
    keep = tfd.placeholder(tfd.float64, [])
    lstm = rnn_cell.LSTMCell(3)
    dropped = rnn_cell.DropoutWrapper(lstm, output_keep_prob=keep, state_keep_prob=0.5, seed=3)
    state = lstm.zero_state(2, tfd.float64)
    out, new = dropped(x, state)
    plain_out, plain_new = lstm(x, state)  # the same weights: the wrapper has none
    basic, h0 = rnn_cell.BasicRNNCell(3), f64(2, 3)
    residual_out, _ = rnn_cell.ResidualWrapper(basic)(x, h0)
    with tfd.device("/job:worker/task:0"):
        placed = rnn_cell.DeviceWrapper(rnn_cell.BasicRNNCell(3, name="placed"),
                                        "/job:worker/task:1")
    placed_out, _ = placed(x, f64(2, 3))
    assert names(dropped.variables) == ["lstm_cell/kernel:0", "lstm_cell/bias:0"]
    assert "/task:1" in placed_out.op.device
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        xs = f64(2, 3)
        same = sess.run([out, plain_out], {x: xs, keep: 1.0})
        np.testing.assert_array_equal(same[0], same[1])
        got_out, got_new, want_out, want_new = sess.run([out, new, plain_out, plain_new],
                                                        {x: xs, keep: 0.5})
        got_residual = sess.run(residual_out, {x: xs})
        want_residual = xs + np_basic_rnn(weights(sess, basic), xs, h0)[0]
    for got, want in ((got_out, want_out), (got_new.h, want_new.h)):
        assert np.all((got == 0) | np.isclose(got, 2 * want, rtol=1e-12))
    np.testing.assert_array_equal(got_new.c, want_new.c)  # c is never dropped, as TF1's
    np.testing.assert_allclose(got_residual, want_residual, rtol=1e-12)
    with pytest.raises(ValueError, match="between 0 and 1"):
        rnn_cell.DropoutWrapper(lstm, input_keep_prob=0.0)
    with pytest.raises(ValueError, match="variational_recurrent"):
        rnn_cell.DropoutWrapper(lstm, variational_recurrent=True)


def test_static_bidirectional_rnn_joins_both_directions_at_each_step():
    steps = [tfd.placeholder(tfd.float64, [3, 2]) for _ in range(4)]
    fw, bw = rnn_cell.BasicRNNCell(2), rnn_cell.BasicRNNCell(3)
    lens = [4, 2, 0]
    outputs, state_fw, state_bw = tfd.nn.static_bidirectional_rnn(
        fw, bw, steps, sequence_length=lens, dtype=tfd.float64)
    assert len(outputs) == 4 and outputs[0].shape.dims == [3, 5]
    xs = f64(3, 4, 2)
    xs_tm = xs.transpose(1, 0, 2)
    with tfd.Session() as sess:
        sess.run(tfd.global_variables_initializer())
        w_fw, w_bw = weights(sess, fw), weights(sess, bw)
        got = sess.run([outputs, state_fw, state_bw], dict(zip(steps, xs_tm)))
    want_fw, want_state_fw = np_run(lambda x_t, s: np_basic_rnn(w_fw, x_t, s), xs_tm,
                                    np.zeros((3, 2)), lens)
    rev_bw, want_state_bw = np_run(lambda x_t, s: np_basic_rnn(w_bw, x_t, s),
                                   np_reversed(xs_tm, lens), np.zeros((3, 3)), lens)
    want = np.concatenate([want_fw, np_reversed(rev_bw, lens)], axis=2)
    np.testing.assert_allclose(np.stack(got[0]), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[1], want_state_fw, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[2], want_state_bw, rtol=1e-12, atol=1e-12)
