import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { CreateShareBodySchema, type CreatedShare, type Share } from '../../shared';
import { hashPassword, verifyPassword } from '../auth/password';
import { SignInThrottle } from '../auth/sign-in-throttle';
import { publicImage, type PublicImage } from '../domain/public-portfolio';
import { ApiError } from '../errors';
import type {
  PortfolioRepository,
  StoredPortfolio,
} from '../repositories/portfolio-repository-contract';
import {
  shareState,
  type ShareRecord,
  type ShareRepository,
} from '../repositories/share-repository-contract';
import type { UserRepository } from '../repositories/user-repository-contract';
import { bodyValidator } from '../validation/body-validator';
import type { Caller, PortfolioService } from './portfolio-service';

const validateCreate = bodyValidator(CreateShareBodySchema);

/** A link's token: 256 random bits, base64url (43 characters). Anything else is no token. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** How long an image link on a shown page works: long enough to read the page, then gone. */
export const IMAGE_LINK_MS = 30 * 60_000;

/** SHA-256 is enough for a 256-bit random token: nothing to guess, so no need for a slow hash. */
export const hashShareToken = (token: string): string =>
  createHash('sha256').update(token).digest('hex');

/** What opening a link comes to; the page routes turn each into a page and a status. */
export type ShareOpening =
  | { kind: 'unknown' }
  | { kind: 'gone' }
  | { kind: 'password'; wrong: boolean }
  | { kind: 'throttled'; retryAfterMs: number }
  | { kind: 'shown'; portfolio: StoredPortfolio; imageUrl: (image: PublicImage) => string };

export interface ShareServiceOptions {
  shares: ShareRepository;
  /** Reads only: a share shows a portfolio whether published or not. */
  repository: Pick<PortfolioRepository, 'get'>;
  /** Who may share is who may change the portfolio (DESIGN §15). */
  portfolios: Pick<PortfolioService, 'authorizeChange'>;
  /** Where failed share passwords are counted, like failed sign-ins. */
  attempts: Pick<
    UserRepository,
    'attempts' | 'recordFailure' | 'clearAttempts' | 'clearAttemptsStartingWith'
  >;
  auth: { scryptLogN: number; maxFailedSignIns: number; failureWindowMs: number };
  /** Signs image links of shown pages; the same on every instance of a backend. */
  secret: string;
  now?: () => number;
}

/**
 * Share links (DESIGN §15): a staff member who may change a portfolio makes a link that shows it
 * read-only to anyone holding it, until it expires, is used up or revoked. Only the token's hash
 * and the password's scrypt hash are kept. A use is counted per page shown: an open without a
 * password, or a right password. The images of a shown page are served through links signed for
 * that share and file, valid IMAGE_LINK_MS: no cookie, and the password is asked once per page.
 */
export class ShareService {
  private readonly throttle: SignInThrottle;
  private readonly now: () => number;

  constructor(private readonly options: ShareServiceOptions) {
    this.now = options.now ?? Date.now;
    this.throttle = new SignInThrottle(
      options.attempts,
      options.auth.maxFailedSignIns,
      options.auth.failureWindowMs,
      this.now,
    );
  }

  // ---- Staff: make, list, revoke ----

  async create(user: Caller, portfolioId: string, rawBody: unknown): Promise<CreatedShare> {
    await this.options.portfolios.authorizeChange(user, portfolioId);
    const body = validateCreate(rawBody);
    const now = this.now();
    if (body.expiresAt <= now) {
      const message = 'The expiry date must be in the future.';
      throw new ApiError('VALIDATION_FAILED', message, [{ field: 'body.expiresAt', message }]);
    }
    const token = randomBytes(32).toString('base64url');
    const share: ShareRecord = {
      shareId: randomUUID(),
      portfolioId,
      tokenHash: hashShareToken(token),
      passwordHash:
        body.password === undefined
          ? null
          : await hashPassword(body.password, this.options.auth.scryptLogN),
      expiresAt: body.expiresAt,
      maxUses: body.maxUses ?? null,
      uses: 0,
      createdTime: now,
      createdBy: user.username,
      revokedTime: null,
    };
    await this.options.shares.insert(share);
    return { ...this.view(share, now), url: `/s/${token}` };
  }

  async list(user: Caller, portfolioId: string): Promise<Share[]> {
    await this.options.portfolios.authorizeChange(user, portfolioId);
    const now = this.now();
    return (await this.options.shares.listOf(portfolioId)).map((share) => this.view(share, now));
  }

  async revoke(user: Caller, portfolioId: string, shareId: string): Promise<void> {
    await this.options.portfolios.authorizeChange(user, portfolioId);
    const share = await this.options.shares.get(shareId);
    if (
      !share ||
      share.portfolioId !== portfolioId ||
      !(await this.options.shares.revoke(shareId, this.now()))
    )
      throw new ApiError('SHARE_NOT_FOUND');
  }

  private view(share: ShareRecord, now: number): Share {
    const state = shareState(share, now);
    return {
      shareId: share.shareId,
      portfolioId: share.portfolioId,
      expiresAt: share.expiresAt,
      maxUses: share.maxUses,
      uses: share.uses,
      hasPassword: share.passwordHash !== null,
      createdTime: share.createdTime,
      createdBy: share.createdBy,
      state: state === 'revoked' ? 'expired' : state,
    };
  }

  // ---- Anyone holding the link ----

  /**
   * Opens a link: without `password` (a GET), a share with a password asks for it and counts
   * nothing; with one (the form's POST), it is checked like a sign-in, per address and share.
   */
  async open(token: string, address: string, password?: string): Promise<ShareOpening> {
    const share = await this.find(token);
    if (!share) return { kind: 'unknown' };
    const now = this.now();
    if (shareState(share, now) !== 'active') return { kind: 'gone' };
    if (share.passwordHash !== null) {
      if (password === undefined) return { kind: 'password', wrong: false };
      const key = `share:${share.shareId}`;
      const retryAfterMs = await this.throttle.retryAfter(address, key);
      if (retryAfterMs > 0) return { kind: 'throttled', retryAfterMs };
      if (!(await verifyPassword(password, share.passwordHash))) {
        await this.throttle.recordFailure(address, key);
        return { kind: 'password', wrong: true };
      }
      await this.throttle.recordSuccess(address, key);
    }
    const portfolio = await this.options.repository.get(share.portfolioId);
    if (!portfolio) return { kind: 'gone' };
    if (!(await this.options.shares.use(share.shareId, now))) return { kind: 'gone' };
    const expires = now + IMAGE_LINK_MS;
    return {
      kind: 'shown',
      portfolio,
      imageUrl: (image) =>
        `/s/${token}/files/${encodeURIComponent(image.fileId)}?exp=${expires}&sig=${this.sign(share.shareId, image.fileId, expires)}`,
    };
  }

  /**
   * An image of a shown page: the share is checked again (revoked or expired: gone; used up is
   * fine, the page that shows it was counted), then the link's signature and time, then that the
   * file is a public image of the shared portfolio. Undefined for anything not to be served.
   */
  async image(
    token: string,
    fileId: string,
    expires: number,
    signature: string,
  ): Promise<PublicImage | undefined> {
    const share = await this.find(token);
    const now = this.now();
    if (!share || share.revokedTime !== null || share.expiresAt <= now) return undefined;
    if (!(expires > now) || !this.signatureMatches(share.shareId, fileId, expires, signature))
      return undefined;
    const portfolio = await this.options.repository.get(share.portfolioId);
    return portfolio && publicImage(portfolio, fileId);
  }

  private async find(token: string): Promise<ShareRecord | undefined> {
    if (!TOKEN_PATTERN.test(token)) return undefined;
    return this.options.shares.byTokenHash(hashShareToken(token));
  }

  private sign(shareId: string, fileId: string, expires: number): string {
    return createHmac('sha256', this.options.secret)
      .update(`${shareId}\n${fileId}\n${expires}`)
      .digest('base64url');
  }

  private signatureMatches(
    shareId: string,
    fileId: string,
    expires: number,
    signature: string,
  ): boolean {
    const expected = Buffer.from(this.sign(shareId, fileId, expires));
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
