import type { components } from '../../generated/openapi.js';
import { presentCommit } from '../commits/commit.presenter.js';
import type { TagSignatureView, TagView } from './tags.service.js';

export type TagJson = components['schemas']['Tag'];
export type TagSignatureJson = components['schemas']['TagSignature'];

/** A tag as every endpoint returns it. Releases do not exist yet, so `release` is null. */
export function presentTag(tag: TagView, projectWebUrl: string): TagJson {
  return {
    name: tag.name,
    message: tag.message,
    target: tag.target,
    commit: tag.commit ? presentCommit(tag.commit, projectWebUrl) : null,
    release: null,
    protected: tag.protected,
    created_at: tag.taggerDate ? tag.taggerDate.toISOString() : null,
  };
}

/** A tag's signature in GitLab's shape for its kind; what forge-api cannot know is null. */
export function presentTagSignature(signature: TagSignatureView): TagSignatureJson {
  if (signature.type === 'PGP')
    return {
      signature_type: 'PGP',
      verification_status: 'unknown_key',
      gpg_key_id: null,
      gpg_key_primary_keyid: signature.keyId,
      gpg_key_user_name: null,
      gpg_key_user_email: null,
      gpg_key_subkey_id: null,
    };
  if (signature.type === 'SSH')
    return { signature_type: 'SSH', verification_status: 'unknown_key', key: null };
  const certificate = signature.certificate;
  return {
    signature_type: 'X509',
    verification_status: signature.verified ? 'verified' : 'unverified',
    x509_certificate: certificate && {
      id: null,
      subject: certificate.subject,
      subject_key_identifier: certificate.subjectKeyIdentifier,
      email: certificate.email,
      serial_number: certificate.serialNumber,
      certificate_status: 'good',
      x509_issuer: {
        id: null,
        subject: certificate.issuer.subject,
        subject_key_identifier: certificate.issuer.subjectKeyIdentifier,
        crl_url: certificate.issuer.crlUrl,
      },
    },
  };
}
