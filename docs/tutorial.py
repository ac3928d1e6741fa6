# %% [markdown]
# # collapse-lab in a notebook: train, analyse, draw
#
# A percent-format script (Jupyter, VS Code and `jupytext` open it as a notebook; `python
# docs/tutorial.py` runs it). CI executes it (`tests/test_tutorial.py`). It trains FedAvg on
# scikit-learn's digits with two label skews, reads the stored runs back, computes the
# covariance spectrum of the global model's representations and the local-vs-global gap R,
# and draws them. About 20 s on 2 cores.

# %%
import os
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

import collapse_lab as cl

store = os.environ.get("TUTORIAL_STORE") or tempfile.mkdtemp(prefix="collapse-lab-tutorial-")

# %% [markdown]
# ## Train from Python, with the CLI's resolver
# The options are `collapse-lab train`'s, named as a config file names them.

# %%
runs = cl.train(store, dataset="digits", alphas=[0.05, "inf"], rounds=5, local_epochs=2, clients=5,
                preset="quick", seed=0)
for run in runs:
    print(run.name, run.status, "rounds", run.rounds, "test acc", run.metrics()[-1]["test_acc"])

# %% [markdown]
# ## Spectra of the global model, and the gap R to client 0's local model

# %%
numbers = {}
for run in cl.open_store(store):
    z = run.features()                    # float64 representations of the test set, last round
    sv, floor = cl.spectrum(z)            # covariance singular values, descending
    m = cl.measures(sv, floor, z=z)       # n above tau, effective rank, dead units, RankMe, ...
    sl, fl = run.spectrum(client=0)       # client 0's local model of the same round
    R, K = cl.local_global_gap(sl, sv, fl, floor)
    numbers[run.meta["alpha"]] = (sv, floor)
    print(f"alpha={run.meta['alpha']:>4}: n>tau {m['n_significant']:3d}  effective rank {m['effective_rank']:.2f}  "
          f"dead units {m['dead_units']}  RankMe {m['rankme']:.2f}  R {R:.3f} (K={K})")

# %% [markdown]
# ## The paper's plot, on your own axes

# %%
fig, ax = plt.subplots(figsize=(4, 3))
curves = [cl.Curve(f"α = {a}", sv, floor) for a, (sv, floor) in sorted(numbers.items())]
cl.plot_spectrum(ax, curves, top=64, title="global model, digits")
fig.savefig(os.path.join(store, "tutorial_spectrum.png"), dpi=120, bbox_inches="tight")
print("figure:", os.path.join(store, "tutorial_spectrum.png"))
