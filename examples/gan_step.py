"""TNS3xx: a GAN training step (run `tensorcopy check examples/`)."""
import torch
from torch import nn

netG = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
netD = nn.Sequential(nn.Linear(8, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
criterion = nn.BCEWithLogitsLoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))

for real in [torch.randn(4, 8)]:
    noise = torch.randn(real.size(0), 16)
    ones, zeros = torch.ones(real.size(0), 1), torch.zeros(real.size(0), 1)

    # (1) Update D.  TNS301: netD(fake) lets errD back-propagate into netG and frees its
    # graph, so the generator step below fails with "Trying to backward through the graph a
    # second time".  `tensorcopy fix` writes netD(fake.detach()).
    netD.zero_grad()
    fake = netG(noise)
    errD = criterion(netD(real), ones) + criterion(netD(fake), zeros)
    errD.backward()
    optimizerD.step()

    # (2) Update G: it reuses `fake`, with its graph, through the updated discriminator.
    netG.zero_grad()
    errG = criterion(netD(fake), ones)
    errG.backward()
    optimizerG.step()
